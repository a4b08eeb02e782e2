// Rendering PDF pages to images (poppler-cpp, with our own libpng/libjpeg
// encoders) and image files (JPEG, PNG, TIFF) to PDF pages. Every exported
// function catches every C++ exception and reports it through hi_error;
// libpng/libjpeg errors end in the shim as error values too. Nothing unwinds
// or longjmps into Swift.
//
// The prefix is hi_, not hf_: HotFolderKit imports PDFShim as well, and two
// C modules declaring the same names would make every use ambiguous.
#ifndef HOTFOLDER_IMAGESHIM_H
#define HOTFOLDER_IMAGESHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HI_OK = 0,
    HI_E_PASSWORD = 1,    // the PDF needs a password we do not have (or it was wrong)
    HI_E_DAMAGED = 2,     // the file is damaged or truncated
    HI_E_SYSTEM = 3,      // an operating-system error (errno in hi_error.sys_errno)
    HI_E_UNSUPPORTED = 4, // a valid file of a kind we do not handle (e.g. a 12-bit JPEG)
    HI_E_ARGUMENT = 5,    // the caller passed something invalid (a bug on our side)
    HI_E_INTERNAL = 6,    // any other exception; sys_errno is ENOMEM when memory ran out
    HI_E_TOO_LARGE = 7,   // the result would exceed a size limit the caller set
    HI_E_FORMAT = 8,      // not a JPEG, PNG or TIFF at all
} hi_status;

typedef struct {
    int status;           // hi_status
    int sys_errno;
    char message[2048];   // names the file (the description the caller passed)
} hi_error;

// Messages a library printed to stderr (poppler, libpng, libtiff) or that the
// shim adds (e.g. "no resolution: 72 dpi assumed"); at most 50, then a count.
typedef struct hi_warnings hi_warnings;
hi_warnings *hi_warnings_new(void);
void hi_warnings_free(hi_warnings *warnings);
size_t hi_warnings_count(hi_warnings *warnings);
// Valid until the next call on warnings.
const char *hi_warnings_at(hi_warnings *warnings, size_t index);

// MARK: - PDF pages to images

typedef struct hi_doc hi_doc;

typedef enum {
    HI_FORMAT_PNG = 0,
    HI_FORMAT_JPEG = 1,
} hi_format;

typedef struct {
    int page_index;       // 0-based
    int format;           // hi_format
    double dpi;           // > 0
    int quality;          // JPEG quality 1...100; ignored for PNG
    int fit_within;       // > 0: scaled down (never up) so the longer side is at most this many pixels
    int64_t max_pixels;   // > 0: refuses a page whose width * height would exceed this
    int output_fd;        // written from its current offset; not closed
    const char *output_description;
} hi_render_options;

typedef struct {
    int width;
    int height;
    double dpi;           // the resolution actually used (lower than asked when fit_within applied)
    int64_t bytes;        // encoded bytes written
} hi_render_result;

// Reads the whole PDF from fd (from offset 0 when seekable; not closed).
// password may be NULL.
hi_doc *hi_doc_open_fd(int fd, const char *description, const char *password, hi_error *err);
void hi_doc_close(hi_doc *doc);
int hi_doc_page_count(hi_doc *doc, hi_error *err);
// Returns 0, or -1 with err set.
int hi_doc_render(hi_doc *doc, const hi_render_options *options, hi_render_result *result, hi_error *err);
// poppler's messages since the document was opened.
hi_warnings *hi_doc_warnings(hi_doc *doc);

// MARK: - image files to PDF

typedef enum {
    HI_IMAGE_UNKNOWN = 0,
    HI_IMAGE_JPEG = 1,
    HI_IMAGE_PNG = 2,
    HI_IMAGE_TIFF = 3,
} hi_image_type;

typedef struct {
    int type;             // hi_image_type
    int width;            // pixels, of the first page (as stored, before EXIF orientation)
    int height;
    int pages;            // TIFF directories; 1 otherwise
    double x_dpi;         // the resolution the PDF page will use (72 when unknown)
    double y_dpi;
    int resolution_known; // 0: the file says nothing usable, x_dpi/y_dpi are the 72 dpi fallback
    int components;       // 1 gray, 3 RGB, 4 CMYK; without alpha
    int has_alpha;
    int orientation;      // EXIF orientation 1...8 (JPEG); 1 otherwise
} hi_image_info;

typedef struct {
    int64_t max_pixels;   // > 0: refuses a page with more pixels
    int output_fd;        // written from its current offset; not closed
    const char *output_description;
} hi_convert_options;

// Returns 0, or -1 with err set. Reads from offset 0; fd is not closed.
int hi_image_probe_fd(int fd, const char *description, hi_image_info *info, hi_error *err);
// Writes a PDF with one page per image (per directory of a TIFF), each page the
// size of the image at its resolution; a JPEG is embedded byte for byte, EXIF
// orientation applied by the page's matrix. Returns the number of pages, or -1
// (the output then holds a partial file). warnings may be NULL.
int hi_image_to_pdf_fd(int input_fd, const char *description, const hi_convert_options *options,
                       hi_warnings *warnings, hi_error *err);

// MARK: - decoding (checks and tests)

// Decodes a PNG or JPEG held in memory to 8-bit RGB rows (no padding), alpha
// composited on white. *rgb is malloc'd: release it with hi_free. Returns 0 or -1.
int hi_decode_rgb(const uint8_t *bytes, size_t length, const char *description, int64_t max_pixels,
                  uint8_t **rgb, int *width, int *height, hi_error *err);
void hi_free(void *pointer);

#ifdef __cplusplus
}
#endif

#endif
