// tests/testdata/bundles/rsc-stub.js: a tiny hand-written plain-script
// dependency bundle (no npm, no build step: copied verbatim).
//   RscStub.payload(name) -> '{"component":"<name>","from":"rsc-stub"}'
//   RscStub.increment()   -> 1, 2, 3, ... (module-level counter)
//   RscStub.calls()       -> how many payload() + increment() calls so far
// The counter lives in this bundle's closure, so tests can prove that module
// state persists across renders in one loaded bundle.
(function () {
  var counter = 0;
  var calls = 0;
  globalThis.RscStub = {
    payload: function (name) {
      calls += 1;
      return JSON.stringify({ component: name, from: 'rsc-stub' });
    },
    increment: function () {
      calls += 1;
      counter += 1;
      return counter;
    },
    calls: function () {
      return calls;
    },
  };
})();
