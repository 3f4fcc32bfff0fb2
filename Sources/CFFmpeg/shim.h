#ifndef NVR_CFFMPEG_SHIM_H
#define NVR_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavutil/avutil.h>
#include <libavutil/opt.h>
#include <libavutil/imgutils.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/crc.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

/* Macros Swift cannot import. */
static inline int nvr_averror(int e) { return AVERROR(e); }
static inline int nvr_averror_eof(void) { return AVERROR_EOF; }
static inline int nvr_averror_exit(void) { return AVERROR_EXIT; }
static inline int nvr_averror_http_unauthorized(void) { return AVERROR_HTTP_UNAUTHORIZED; }
static inline int nvr_averror_http_forbidden(void) { return AVERROR_HTTP_FORBIDDEN; }
static inline int nvr_averror_http_not_found(void) { return AVERROR_HTTP_NOT_FOUND; }
static inline int64_t nvr_av_nopts_value(void) { return AV_NOPTS_VALUE; }
/*
 * libavformat's RTMP listener accepts a push to any stream key: on a mismatch it only logs
 * "Unexpected stream %s, expecting %s". This log hook hands that case to the host (which
 * then refuses the push) and passes every message on to the default logger.
 */
#include <stdarg.h>
#include <string.h>
typedef void (*nvr_rtmp_key_mismatch_fn)(const char *pushed);
/* A function-local static: Swift's importer emits functions from this header, not globals. */
static inline nvr_rtmp_key_mismatch_fn *nvr_rtmp_key_mismatch_slot(void) {
    static nvr_rtmp_key_mismatch_fn fn;
    return &fn;
}
static void nvr_log_hook(void *avcl, int level, const char *fmt, va_list vl) {
    nvr_rtmp_key_mismatch_fn nvr_rtmp_key_mismatch = *nvr_rtmp_key_mismatch_slot();
    if (nvr_rtmp_key_mismatch && fmt && strncmp(fmt, "Unexpected stream %s, expecting %s", 34) == 0) {
        va_list copy;
        va_copy(copy, vl);
        const char *pushed = va_arg(copy, const char *);
        va_end(copy);
        nvr_rtmp_key_mismatch(pushed);
    }
    av_log_default_callback(avcl, level, fmt, vl);
}
static inline void nvr_install_log_hook(nvr_rtmp_key_mismatch_fn fn) {
    *nvr_rtmp_key_mismatch_slot() = fn;
    av_log_set_callback(nvr_log_hook);
}
#endif
