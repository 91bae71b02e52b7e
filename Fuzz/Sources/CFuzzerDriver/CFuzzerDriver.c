// Declarations only (see include/CFuzzerDriver.h); SwiftPM wants one source file per C target.
#include "CFuzzerDriver.h"
