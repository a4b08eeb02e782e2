#include "SummaryShim.h"
#include <pango/pangocairo.h>
int hs_placeholder(void) { return PANGO_VERSION_MAJOR; }
