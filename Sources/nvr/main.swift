import NVRCommands

#if canImport(Glibc)
    import Glibc
#endif

// Everything nvr creates (storage root, index, recordings, certificates) is its owner's
// alone: the index holds camera passwords and the recordings are private.
umask(0o077)
NVRCommand.runMain()
