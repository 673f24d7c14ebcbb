from scannerd.cli import main

raise SystemExit(main())
