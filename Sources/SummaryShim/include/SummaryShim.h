// Annotation summary pages laid out with pango and written as PDF by cairo.
// Errors come back as values; nothing here aborts on bad input.
#ifndef HOTFOLDER_SUMMARYSHIM_H
#define HOTFOLDER_SUMMARYSHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HS_OK = 0,
    HS_E_ARGUMENT = 1,   // the caller passed something invalid (a bug on our side)
    HS_E_SYSTEM = 2,     // writing the output failed (errno in hs_error.sys_errno)
    HS_E_RENDER = 3,     // cairo or pango failed
} hs_status;

typedef struct {
    int status;          // hs_status
    int sys_errno;
    char message[1024];
} hs_error;

// One annotation: a heading line in bold, then its text. Both UTF-8; invalid
// sequences are shown as U+FFFD. Either may be NULL.
typedef struct {
    const char *heading;
    const char *text;
} hs_entry;

typedef struct {
    double width;        // page size in points; clamped to 144...14400
    double height;
    const char *title;   // first page, large and bold; may be NULL
    const char *subtitle;// below the title; may be NULL
    const char *font;    // pango font description; NULL means "DejaVu Sans 10"
    const char *metadata_title;     // the PDF's Title; may be NULL
    const char *output_description; // names the output in error messages
} hs_layout;

typedef struct {
    int pages;
    // Characters drawn as boxes because no installed font covers them.
    long unshown_characters;
} hs_result;

// Writes a PDF of the entries, flowing across as many pages as they need, to
// output_fd from its current offset (not closed). Fonts come from fontconfig,
// which falls back per script; right-to-left text is laid out right to left.
// Safe to call from several threads (calls are serialised). Returns 0, or -1
// with err filled in.
int hs_render_summary(const hs_entry *entries, size_t count, const hs_layout *layout, int output_fd,
                      hs_result *result, hs_error *err);

#ifdef __cplusplus
}
#endif

#endif
