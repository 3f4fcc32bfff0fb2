// Time90k and Timebase are part of NVRPlayback's interface (every time in its API is in
// ticks): a module that imports it gets them without importing NVRTime too.
@_exported import NVRTime
