// Time90k and Timebase are part of NVRCore's interface (every time in its API is in ticks):
// a module that imports NVRCore gets them without importing NVRTime too.
@_exported import NVRTime
// The storage layer's types (Retention, IndexWriter, ConfigError…) appear in NVRCore's API
// (`Recorder.retention`, `Recorder.writer`, errors it throws).
@_exported import NVRStorage
