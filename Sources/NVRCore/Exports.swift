// Time90k and Timebase are part of NVRCore's interface (every time in its API is in ticks):
// a module that imports NVRCore gets them without importing NVRTime too.
@_exported import NVRTime
// The storage layer's types (Retention, IndexWriter, ConfigError…) appear in NVRCore's API
// (`Recorder.retention`, `Recorder.writer`, errors it throws).
@_exported import NVRStorage
// The recorder and its plugin host: `Recorder`, `CameraSession`, `PluginHost`… are what
// NVRCore's camera administration works on and hands out.
@_exported import NVRRecorder
@_exported import NVRPluginHost
