AsyncPropsApp.deliver("user", {"name":"Ada \u003cadmin\u003e","city":"London"})
