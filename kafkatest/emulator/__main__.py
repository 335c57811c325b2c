"""`python -m kafkatest.emulator`: the standalone emulator."""

from kafkatest.emulator.standalone import main

raise SystemExit(main())
