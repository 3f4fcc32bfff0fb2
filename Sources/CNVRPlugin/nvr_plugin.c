/* The ABI is the header; this file only gives SwiftPM a source to build. */
#include "nvr_plugin.h"
