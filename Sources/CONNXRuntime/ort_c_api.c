// Header-only: the declarations are in include/ort_c_api.h; this file makes the target a C one
// and compiles the header's layout checks.
#include "ort_c_api.h"
