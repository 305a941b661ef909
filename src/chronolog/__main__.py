from chronolog.cli.main import main

raise SystemExit(main())
