AsyncPropsApp.close()
