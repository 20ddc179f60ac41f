from clperf.cli import main

raise SystemExit(main())
