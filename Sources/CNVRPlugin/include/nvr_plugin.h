/*
 * nvr_plugin.h — the camera plugin C ABI, version 1.
 *
 * The ONLY code the NVR host and its camera plugins share. Plugins are shared
 * libraries loaded with dlopen(RTLD_NOW | RTLD_LOCAL); the host looks up
 * NVR_PLUGIN_ENTRY_SYMBOL, calls it, and checks abi_version before touching any
 * other field. Only C types cross this boundary: plain structs, function
 * pointers, opaque instance pointers, UTF-8 strings and JSON documents.
 * See design/plugin-abi.md for the rules (ownership, threads, versioning).
 */
#ifndef NVR_PLUGIN_H
#define NVR_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NVR_PLUGIN_ABI_VERSION 1u
#define NVR_PLUGIN_ENTRY_SYMBOL "nvr_plugin_entry"

/* Capability bits (nvr_plugin_entry_v1.capabilities). */
#define NVR_CAP_LIVE_URL      (1ull << 0) /* live video as an input URL the host opens */
#define NVR_CAP_LIVE_PUSH     (1ull << 1) /* live video pushed as packets */
#define NVR_CAP_EVENTS        (1ull << 2) /* reports events (motion, doorbell, ...) */
#define NVR_CAP_CARD_LIST     (1ull << 3) /* lists media on the camera's memory card */
#define NVR_CAP_CARD_DOWNLOAD (1ull << 4) /* streams card files in chunks */
#define NVR_CAP_SNAPSHOT      (1ull << 5) /* camera-side JPEG snapshot */
#define NVR_CAP_DISCOVERY     (1ull << 6) /* finds cameras on the network */
#define NVR_CAP_CONTROL       (1ull << 7) /* camera control (capture, settings) */
#define NVR_CAP_SUBSTREAM     (1ull << 8) /* offers a lower-resolution sub-stream */
#define NVR_CAP_PTZ           (1ull << 9) /* pan, tilt, zoom and presets (nvr_ptz_functions) */
#define NVR_CAP_TALK          (1ull << 10) /* audio to the camera: an RTSP back-channel (nvr_talk_info) */

/* Connection states reported through nvr_host_v1.connection_state. */
typedef enum {
    NVR_STATE_CONNECTING = 0,
    NVR_STATE_STREAMING = 1,
    NVR_STATE_LOST_EXPECTED = 2,   /* e.g. camera asleep, stopped on request */
    NVR_STATE_LOST_UNEXPECTED = 3, /* network error, camera died */
} nvr_connection_state;

typedef enum {
    NVR_LOG_ERROR = 0,
    NVR_LOG_WARNING = 1,
    NVR_LOG_INFO = 2,
    NVR_LOG_DEBUG = 3,
} nvr_log_level;

typedef enum {
    NVR_CODEC_H264 = 1,
    NVR_CODEC_H265 = 2,
    NVR_CODEC_AAC = 3,
} nvr_codec;

/* One elementary stream of pushed live video. */
typedef struct {
    uint32_t struct_size;      /* sizeof(nvr_stream_params) */
    uint32_t codec;            /* nvr_codec */
    int32_t width, height;     /* video */
    int32_t sample_rate;       /* audio */
    int32_t channels;          /* audio */
    int32_t timebase_num;      /* timestamps of this stream's packets */
    int32_t timebase_den;
    const uint8_t *extradata;  /* avcC/hvcC, Annex B parameter sets, or AudioSpecificConfig */
    size_t extradata_size;
} nvr_stream_params;

/* One compressed frame; data is valid only during the call. */
typedef struct {
    uint32_t struct_size;      /* sizeof(nvr_packet) */
    int32_t stream_index;      /* index into the array given to begin_streams */
    int64_t pts, dts;          /* in the stream's timebase */
    int64_t duration;          /* 0 when unknown */
    int32_t key;               /* non-zero for a key (sync) frame */
    const uint8_t *data;       /* Annex B or length-prefixed, as the extradata says */
    size_t size;
} nvr_packet;

/*
 * Callbacks the host gives each camera instance. Any of them may be called from
 * any plugin thread; the host makes them thread-safe. Strings are copied by the
 * host before the call returns.
 */
typedef struct {
    uint32_t struct_size;      /* sizeof(nvr_host_v1); check before using later fields */
    void *host_ctx;            /* pass back as the first argument */
    void (*log)(void *host_ctx, int32_t level, const char *message);
    void (*connection_state)(void *host_ctx, int32_t state, const char *reason);
    /* {"type":"motion","phase":"start"|"stop"|"pulse","score":0.7,"time90k":...} */
    void (*event)(void *host_ctx, const char *event_json);
    /* {"media":[{"id":"...","start90k":...,"end90k":...,"size":...}]} */
    void (*card_media)(void *host_ctx, const char *media_json);
    /* Push mode: announce streams (again on any change; that starts a new run). 0 = ok. */
    int32_t (*begin_streams)(void *host_ctx, const nvr_stream_params *streams, int32_t count);
    /* Push mode: one packet. Returns 0, or non-zero when the host wants the plugin to stop. */
    int32_t (*push_packet)(void *host_ctx, const nvr_packet *packet);
} nvr_host_v1;

/*
 * Memory card (appended fields: present when struct_size covers them).
 *
 * card_list (NVR_CAP_CARD_LIST): the videos on the camera's card, as JSON
 *   {"clock_local": 1763800000.5 | null,
 *    "media": [{"id": "100GOPRO/GH010001.MP4", "name": "GH010001.MP4",
 *               "start_local": 1763799000 | "start_utc": 1763795400.25,
 *               "duration": 20.0, "size": 12345678}]}
 *   Times are seconds. "start_local" is the camera's wall clock read as if it were UTC
 *   (what most cameras stamp files with); "clock_local" is the camera's clock in the same
 *   form, read while listing, so the host can turn local times into UTC (design/card.md).
 *   A camera that knows its zone gives "start_utc" instead.
 * card_read (NVR_CAP_CARD_DOWNLOAD): streams bytes [offset, offset + length) of one file
 *   (length -1 = to the end) through sink, in chunks, on the calling thread. sink returns
 *   non-zero to cancel. Returns 0 when done, 1 when cancelled, -1 on failure (*error set).
 */
typedef int32_t (*nvr_card_sink)(void *sink_ctx, const uint8_t *data, size_t size);

typedef struct {
    char *(*card_list)(void *instance, char **error);
    int32_t (*card_read)(void *instance, const char *id, int64_t offset, int64_t length,
                         nvr_card_sink sink, void *sink_ctx, char **error);
} nvr_card_functions;

/*
 * Camera control (appended field: present when struct_size covers it).
 *
 * nvr_event (NVR_CAP_CONTROL): an NVR event of this camera started or ended, as JSON
 *   {"id": 12, "type": "motion", "source": "motion" | "plugin", "phase": "start" | "end",
 *    "time90k": 152...}
 *   so the plugin can act on the camera (start and stop camera-side capture, ...). It is
 *   called on the recording path: return at once and do the work on the plugin's own thread.
 */
typedef struct {
    void (*nvr_event)(void *instance, const char *event_json);
} nvr_control_functions;

/*
 * Discovery (appended field: present when struct_size covers it).
 *
 * discover (NVR_CAP_DISCOVERY): looks for the plugin's cameras on the networks this machine
 *   is on for about `seconds` (WS-Discovery, mDNS, the vendor's broadcasts, a camera's own
 *   access point), then returns what answered, as JSON
 *   {"found": [{"address": "192.168.1.20:80", "id": "urn:uuid:…", "name": "Porch",
 *               "model": "IPC-1", "options": {"address": "192.168.1.20:80"}}]}
 *   "options" are the `camera add --option`s that reach that camera, except secrets it cannot
 *   know (user, password, keys). Called without an instance, from any thread; may block for
 *   `seconds`. NULL on failure with a message in *error.
 */
typedef struct {
    char *(*discover)(double seconds, char **error);
} nvr_discovery_functions;

/*
 * Pan, tilt, zoom (appended field: present when struct_size covers it).
 *
 * ptz (NVR_CAP_PTZ): one request, as JSON, answered as JSON; blocks while the camera answers
 *   (a few seconds at most). Called from any thread, possibly while the instance streams.
 *   {"op": "describe"}  -> {"presets": [{"token": "1", "name": "Door"}], "pan_tilt": true,
 *                           "zoom": true, "absolute_zoom": true,
 *                           "position": {"pan": 0.1, "tilt": 0, "zoom": 0.5}}
 *                          ("position" only when the camera tells it)
 *   {"op": "move", "pan": -1..1, "tilt": -1..1, "zoom": -1..1, "seconds": 0.1..10}
 *                       -> {}   continuous move at those speeds; the plugin bounds it on the
 *                               camera (ONVIF: Timeout) so a lost stop cannot leave it turning
 *   {"op": "stop"}      -> {}
 *   {"op": "goto", "preset": "1"}             -> {}
 *   {"op": "set", "name": "Door", "preset": "1" | absent (a new preset)} -> {"preset": "1"}
 *   {"op": "zoom", "zoom": 0..1}              -> {}   absolute zoom, when "absolute_zoom"
 *   A camera that turns out to have no PTZ (or not that op) answers {"unsupported": "why"};
 *   NULL with a message in *error when the camera failed or refused.
 */
typedef struct {
    char *(*ptz)(void *instance, const char *request_json, char **error);
} nvr_ptz_functions;

/*
 * Two-way audio (appended field: present when struct_size covers it).
 *
 * NVR_CAP_TALK: the camera's live RTSP URL (live_source, main stream) may carry an ONVIF audio
 *   back-channel (DESCRIBE with "Require: www.onvif.org/ver20/backchannel"); the host opens it
 *   itself on a connection of its own when someone talks (or a page asks whether it can), and
 *   says so when the camera has none. Honoured only with NVR_CAP_LIVE_URL and an rtsp:// URL.
 * why_not: without NVR_CAP_TALK, one line for people on why this plugin's cameras cannot be
 *   talked through ("Tuya cameras talk only through Tuya's closed P2P SDK"); NULL: not said.
 */
typedef struct {
    const char *why_not;
} nvr_talk_info;

/*
 * The plugin's description and entry points. Returned by nvr_plugin_entry();
 * static storage owned by the plugin, never freed.
 * Functions returning char * return strings allocated by the plugin; the host
 * releases them with free_string.
 */
typedef struct {
    uint32_t abi_version;      /* NVR_PLUGIN_ABI_VERSION the plugin was built against */
    uint32_t struct_size;      /* sizeof(nvr_plugin_entry_v1) */
    const char *name;          /* "rtsp", "demo", ... matches the camera's plugin field */
    const char *version;       /* plugin version, e.g. "1.0.0" */
    const char *description;   /* one line for people */
    uint64_t capabilities;     /* NVR_CAP_* bits */

    /* Create an instance from a JSON config object. NULL on failure, with a message in *error. */
    void *(*create)(const char *config_json, const nvr_host_v1 *host, char **error);
    /* Destroy an instance; stops anything it started first. */
    void (*destroy)(void *instance);

    /*
     * NVR_CAP_LIVE_URL: describe the live input, as JSON
     * {"url":"rtsp://...","format":"rtsp"|null,"options":{"rtsp_transport":"tcp",...}}.
     * Called before every (re)connection, so single-use URLs can be fresh.
     * substream: 0 main, 1 sub. NULL on failure with a message in *error.
     */
    char *(*live_source)(void *instance, int32_t substream, char **error);

    /* NVR_CAP_LIVE_PUSH: start pushing through begin_streams/push_packet; 0 = ok. */
    int32_t (*start_push)(void *instance, char **error);
    /* Stop pushing; returns after the last push_packet call has returned. */
    void (*stop_push)(void *instance);

    /* Status for people and the API, as a JSON object (battery, card, ...). May be NULL. */
    char *(*status)(void *instance);

    void (*free_string)(char *string);

    /* Appended: NULL members (or a smaller struct_size) mean "not offered". */
    nvr_card_functions card;
    nvr_control_functions control;
    nvr_discovery_functions discovery;
    nvr_ptz_functions ptz;
    nvr_talk_info talk;
} nvr_plugin_entry_v1;


/* The exported entry symbol's type. */
typedef const nvr_plugin_entry_v1 *(*nvr_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* NVR_PLUGIN_H */
