#include "ImageShim.h"
extern "C" int hi_placeholder(void) { return 0; }
