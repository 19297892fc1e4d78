'<p>hello</p>'
