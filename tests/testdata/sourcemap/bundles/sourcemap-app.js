(()=>{function r(e){if(e&&e.name)return"<p>Hello, "+e.name+"</p>";throw new Error("greet: no user given")}globalThis.SourceMapApp={greet:function(e){return r(e)},where:function(){return getStackTrace()}};})();
//# sourceMappingURL=sourcemap-app.js.map
