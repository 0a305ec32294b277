from multiverse.cli import main

raise SystemExit(main())
