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
#include <libswscale/swscale.h>

/* Macros Swift cannot import. */
static inline int nvr_averror(int e) { return AVERROR(e); }
static inline int nvr_averror_eof(void) { return AVERROR_EOF; }
static inline int nvr_averror_exit(void) { return AVERROR_EXIT; }
static inline int nvr_averror_http_unauthorized(void) { return AVERROR_HTTP_UNAUTHORIZED; }
static inline int nvr_averror_http_forbidden(void) { return AVERROR_HTTP_FORBIDDEN; }
static inline int nvr_averror_http_not_found(void) { return AVERROR_HTTP_NOT_FOUND; }
static inline int64_t nvr_av_nopts_value(void) { return AV_NOPTS_VALUE; }
#endif
