import NVRCommands

NVRCommand.main()
