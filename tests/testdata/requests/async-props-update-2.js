AsyncPropsApp.deliver("comments", [{"author":"Grace","text":"First! \u003cb\u003ebold\u003c/b\u003e"},{"author":"Linus","text":"Ünïcödé and 🚀 count as bytes, not characters."}])
