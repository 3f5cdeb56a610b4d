// proxyapp-load: see LoadCommand for what it does and prints.
LoadCommand.main()
