import CFFmpeg

/// Quietens libav's own logging: errors come back as codes, and the recording path
/// must not log per packet. NVR_AV_LOG=debug|info|warning turns it back on.
public enum MediaLog {
    public static func configure(environment: [String: String]) {
        switch environment["NVR_AV_LOG"] {
        case "debug": av_log_set_level(AV_LOG_DEBUG)
        case "info": av_log_set_level(AV_LOG_INFO)
        case "warning": av_log_set_level(AV_LOG_WARNING)
        case "error": av_log_set_level(AV_LOG_ERROR)
        default: av_log_set_level(AV_LOG_QUIET)
        }
    }
}
