// The part of ONNX Runtime's C API (onnxruntime_c_api.h) the NVR uses, declared here because the
// runtime ships without headers (it comes from the `onnxruntime` PyPI wheel) and is loaded with
// dlopen: the NVR builds and runs without it.
//
// OrtApi is a table of function pointers that ONNX Runtime only ever appends to, so a prefix of
// it is ABI-compatible with every later runtime. The members the NVR does not call are `void *`
// placeholders, numbered with their index in the table; the ones it calls have their real types.
// The NVR asks GetApi for version NVR_ORT_API_VERSION (ONNX Runtime 1.13), which every runtime
// since answers.
#ifndef NVR_ORT_C_API_H
#define NVR_ORT_C_API_H

#include <stddef.h>
#include <stdint.h>

#define NVR_ORT_API_VERSION 13

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtAllocator OrtAllocator;

typedef enum ONNXTensorElementDataType {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
} ONNXTensorElementDataType;

typedef enum OrtLoggingLevel {
    ORT_LOGGING_LEVEL_VERBOSE = 0,
    ORT_LOGGING_LEVEL_INFO = 1,
    ORT_LOGGING_LEVEL_WARNING = 2,
    ORT_LOGGING_LEVEL_ERROR = 3,
    ORT_LOGGING_LEVEL_FATAL = 4,
} OrtLoggingLevel;

typedef enum GraphOptimizationLevel {
    ORT_DISABLE_ALL = 0,
    ORT_ENABLE_BASIC = 1,
    ORT_ENABLE_EXTENDED = 2,
    ORT_ENABLE_ALL = 99,
} GraphOptimizationLevel;

typedef enum OrtAllocatorType { OrtInvalidAllocator = -1, OrtDeviceAllocator = 0, OrtArenaAllocator = 1 } OrtAllocatorType;
typedef enum OrtMemType { OrtMemTypeCPUInput = -2, OrtMemTypeCPUOutput = -1, OrtMemTypeDefault = 0 } OrtMemType;

typedef struct OrtApi {
    void *_0_CreateStatus;
    void *_1_GetErrorCode;
    const char *(*GetErrorMessage)(const OrtStatus *status);
    OrtStatus *(*CreateEnv)(OrtLoggingLevel level, const char *logid, OrtEnv **out);
    void *_4, *_5, *_6;
    OrtStatus *(*CreateSession)(const OrtEnv *env, const char *path, const OrtSessionOptions *options, OrtSession **out);
    OrtStatus *(*CreateSessionFromArray)(const OrtEnv *env, const void *data, size_t length,
                                         const OrtSessionOptions *options, OrtSession **out);
    OrtStatus *(*Run)(OrtSession *session, const OrtRunOptions *run_options, const char *const *input_names,
                      const OrtValue *const *inputs, size_t input_count, const char *const *output_names,
                      size_t output_count, OrtValue **outputs);
    OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **out);
    void *_11, *_12, *_13, *_14, *_15, *_16, *_17, *_18, *_19, *_20, *_21, *_22;
    OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *options, GraphOptimizationLevel level);
    OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *options, int threads);
    OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *options, int threads);
    void *_26, *_27, *_28, *_29;
    OrtStatus *(*SessionGetInputCount)(const OrtSession *session, size_t *out);
    OrtStatus *(*SessionGetOutputCount)(const OrtSession *session, size_t *out);
    void *_32;
    OrtStatus *(*SessionGetInputTypeInfo)(const OrtSession *session, size_t index, OrtTypeInfo **out);
    OrtStatus *(*SessionGetOutputTypeInfo)(const OrtSession *session, size_t index, OrtTypeInfo **out);
    void *_35;
    OrtStatus *(*SessionGetInputName)(const OrtSession *session, size_t index, OrtAllocator *allocator, char **out);
    OrtStatus *(*SessionGetOutputName)(const OrtSession *session, size_t index, OrtAllocator *allocator, char **out);
    void *_38, *_39, *_40, *_41, *_42, *_43, *_44, *_45, *_46, *_47, *_48;
    OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *data, size_t data_length,
                                                 const int64_t *shape, size_t shape_length,
                                                 ONNXTensorElementDataType type, OrtValue **out);
    void *_50;
    OrtStatus *(*GetTensorMutableData)(OrtValue *value, void **out);
    void *_52, *_53, *_54;
    OrtStatus *(*CastTypeInfoToTensorInfo)(const OrtTypeInfo *info, const OrtTensorTypeAndShapeInfo **out);
    void *_56, *_57, *_58, *_59;
    OrtStatus *(*GetTensorElementType)(const OrtTensorTypeAndShapeInfo *info, ONNXTensorElementDataType *out);
    OrtStatus *(*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
    OrtStatus *(*GetDimensions)(const OrtTensorTypeAndShapeInfo *info, int64_t *values, size_t count);
    void *_63;
    OrtStatus *(*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);
    OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *value, OrtTensorTypeAndShapeInfo **out);
    void *_66, *_67, *_68;
    OrtStatus *(*CreateCpuMemoryInfo)(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo **out);
    void *_70, *_71, *_72, *_73, *_74, *_75;
    OrtStatus *(*AllocatorFree)(OrtAllocator *allocator, void *p);
    void *_77;
    OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **out);
    void *_79, *_80, *_81, *_82, *_83, *_84, *_85, *_86, *_87, *_88, *_89, *_90, *_91;
    void (*ReleaseEnv)(OrtEnv *p);
    void (*ReleaseStatus)(OrtStatus *p);
    void (*ReleaseMemoryInfo)(OrtMemoryInfo *p);
    void (*ReleaseSession)(OrtSession *p);
    void (*ReleaseValue)(OrtValue *p);
    void *_97;
    void (*ReleaseTypeInfo)(OrtTypeInfo *p);
    void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo *p);
    void (*ReleaseSessionOptions)(OrtSessionOptions *p);
} OrtApi;

typedef struct OrtApiBase {
    const OrtApi *(*GetApi)(uint32_t version);
    const char *(*GetVersionString)(void);
} OrtApiBase;

typedef const OrtApiBase *(*OrtGetApiBaseFunction)(void);

// The table's layout is checked where it is declared: member N sits at N pointers.
_Static_assert(offsetof(OrtApi, GetErrorMessage) == 2 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, CreateSession) == 7 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, SetSessionGraphOptimizationLevel) == 23 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, SessionGetInputCount) == 30 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, SessionGetInputName) == 36 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, CreateTensorWithDataAsOrtValue) == 49 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, CastTypeInfoToTensorInfo) == 55 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, GetTensorElementType) == 60 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, GetTensorShapeElementCount) == 64 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, CreateCpuMemoryInfo) == 69 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, AllocatorFree) == 76 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, GetAllocatorWithDefaultOptions) == 78 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, ReleaseEnv) == 92 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, ReleaseTypeInfo) == 98 * sizeof(void *), "OrtApi layout");
_Static_assert(offsetof(OrtApi, ReleaseSessionOptions) == 100 * sizeof(void *), "OrtApi layout");

#endif
