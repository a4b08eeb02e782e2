// Rendering PDF pages to images (poppler-cpp) and image files to PDF pages.
// Every function catches every C++ exception; only error values cross into Swift.
#ifndef HOTFOLDER_IMAGESHIM_H
#define HOTFOLDER_IMAGESHIM_H
#ifdef __cplusplus
extern "C" {
#endif
int hi_placeholder(void);
#ifdef __cplusplus
}
#endif
#endif
