// A C interface over libqpdf. Every function catches every C++ exception and
// reports it through hf_error; nothing may unwind into Swift.
#ifndef HOTFOLDER_PDFSHIM_H
#define HOTFOLDER_PDFSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HF_OK = 0,
    HF_E_PASSWORD = 1,   // the document needs a password we do not have
    HF_E_DAMAGED = 2,    // qpdf could not make sense of the file
    HF_E_SYSTEM = 3,     // an operating-system error (errno in hf_error.sys_errno)
    HF_E_UNSUPPORTED = 4,
    HF_E_ARGUMENT = 5,   // the caller passed something invalid (a bug on our side)
    HF_E_INTERNAL = 6,   // any other exception
} hf_status;

typedef struct {
    int status;          // hf_status
    int sys_errno;
    char message[2048];
} hf_error;

typedef struct hf_doc hf_doc;

typedef struct {
    int pages;
    int encrypted;
    int allow_print_low;
    int allow_print_high;
    int allow_modify_annotations;
    int allow_extract;
    int has_form;
    int need_appearances;
    int signed_form;     // a signature field exists: rewriting invalidates it
    int total_annotations;
} hf_info;

typedef enum {
    HF_ANNOT_EMBED = 0,
    HF_ANNOT_FLATTEN = 1,           // screen appearance; links stay live
    HF_ANNOT_FLATTEN_PRINT = 2,     // only annotations with the print flag
    HF_ANNOT_REMOVE = 3,
} hf_annotation_mode;

typedef struct {
    const int *pages;    // 0-based indexes to keep, ascending; NULL keeps every page
    int page_count;
    int annotations;     // hf_annotation_mode
    const char *title;   // UTF-8; NULL keeps the document's Title
    int output_fd;       // written from its current offset; not closed
    const char *output_description;
    // Swift zero-initialises the struct, so the zero value must mean "nothing
    // to append": fd 0 is a valid descriptor, hence the separate flag.
    int has_append;      // nonzero: append every page of the PDF read from append_fd
    int append_fd;       // seekable; not closed; appended after the selected pages
    const char *append_description;
} hf_generate_options;

// Opens a PDF read from fd (which must be seekable; it is not closed and its
// offset is not relied upon). password may be NULL.
hf_doc *hf_doc_open_fd(int fd, const char *description, const char *password, hf_error *err);
void hf_doc_close(hf_doc *doc);

int hf_doc_info(hf_doc *doc, hf_info *out, hf_error *err);
// Annotations that a person would call annotations: everything but Link and Popup.
int hf_doc_page_annotation_count(hf_doc *doc, int page_index, hf_error *err);
// Copies the Title (UTF-8) into buf; returns its full length, or -1 on error.
long hf_doc_title(hf_doc *doc, char *buf, size_t capacity, hf_error *err);

int hf_doc_generate(hf_doc *doc, const hf_generate_options *options, hf_error *err);

// The annotations people wrote on the given pages (0-based indexes; NULL means
// every page), as a malloc'd UTF-8 JSON array in page order, then /Annots
// order; free it with hf_free. Links, popups and form widgets are left out.
// Each entry: {"page": 1-based page in this document, "type": subtype without
// the slash, "author", "subject", "date" (ISO 8601 when the PDF date parses,
// else as written), "text", "flags"}; absent values are omitted. Call before
// hf_doc_generate, which changes the document. Returns the number of entries,
// or -1 on error (*json_out is then NULL).
int hf_doc_annotations(hf_doc *doc, const int *pages, int page_count, char **json_out, hf_error *err);
void hf_free(void *p);

// The visible size of a page (0-based) in points: the CropBox within the
// MediaBox, times /UserUnit, width and height swapped for /Rotate 90 or 270.
int hf_doc_page_size(hf_doc *doc, int page_index, double *width, double *height, hf_error *err);

// Keeps freed memory in the heap instead of handing it back to the kernel
// after every document (measured: libqpdf 11.3's allocation pattern made a
// 50-page document cost ~1,900 page faults, 40% of the time in the kernel).
// Call once per process that generates documents.
void hf_tune_allocator(void);

// Warnings collected so far (qpdf's and the shim's own); the pointer stays
// valid until the next call on doc.
size_t hf_doc_warning_count(hf_doc *doc);
const char *hf_doc_warning(hf_doc *doc, size_t index);

#ifdef __cplusplus
}
#endif

#endif
