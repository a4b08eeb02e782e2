#include "SummaryShim.h"

#include <pango/pangocairo.h>
#include <cairo/cairo-pdf.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// Pango font maps and fontconfig are not thread-safe, and summaries are rare:
// one lock around the whole render costs nothing worth a finer design.
static pthread_mutex_t render_lock = PTHREAD_MUTEX_INITIALIZER;
// Created once and kept for the life of the process: loading fontconfig's
// configuration and font list is the expensive part of a render.
static PangoFontMap *shared_fontmap;

static const double kMinPageSide = 144;   // below that a line holds too few words
static const double kMaxPageSide = 14400; // the largest page PDF viewers accept

static void set_error(hs_error *err, int status, int sys_errno, const char *format, ...) {
    if (!err) {
        return;
    }
    err->status = status;
    err->sys_errno = sys_errno;
    va_list args;
    va_start(args, format);
    vsnprintf(err->message, sizeof(err->message), format, args);
    va_end(args);
}

typedef struct {
    int fd;
    int write_errno; // first failure, 0 if none
} output_sink;

static cairo_status_t write_to_fd(void *closure, const unsigned char *data, unsigned int length) {
    output_sink *sink = closure;
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(sink->fd, data + done, length - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            // A zero-byte write of a non-empty buffer would loop forever.
            sink->write_errno = n < 0 ? errno : EIO;
            return CAIRO_STATUS_WRITE_ERROR;
        }
        done += (size_t)n;
    }
    return CAIRO_STATUS_SUCCESS;
}

// Text from PDFs carries control characters that fonts have no glyph for;
// drawn, they would be counted as characters no font covers. Every kind of
// paragraph break becomes '\n', tabs stay, and trailing blank lines go.
// Returns a g_malloc'd string.
static char *displayable(const char *text) {
    char *valid = g_utf8_make_valid(text, -1);
    GString *out = g_string_sized_new(strlen(valid));
    for (const char *p = valid; *p; p = g_utf8_next_char(p)) {
        gunichar c = g_utf8_get_char(p);
        if (c == '\r' && p[1] == '\n') {
            continue; // the '\n' follows
        }
        if (c == '\n' || c == '\r' || c == 0x2029) {
            g_string_append_c(out, '\n');
        } else if (c == '\t' || c == 0x2028) {
            g_string_append_unichar(out, c);
        } else if (c < 0x20 || (c >= 0x7F && c < 0xA0)) {
            g_string_append_c(out, ' ');
        } else {
            g_string_append_unichar(out, c);
        }
    }
    g_free(valid);
    while (out->len > 0 && (out->str[out->len - 1] == '\n' || out->str[out->len - 1] == ' ')) {
        g_string_truncate(out, out->len - 1);
    }
    return g_string_free(out, FALSE);
}

// Pango lays out a layout's paragraphs together and slows down with their
// square, and measured here it misplaced lines beyond a few hundred kB of one
// paragraph (they piled up on the last page). So every paragraph gets its own
// layout, and a paragraph longer than this is cut into pieces.
static const size_t kMaxPiece = 16 * 1024;

// Length of the piece of paragraph text starting at p: up to the next '\n',
// at most kMaxPiece bytes, cut after a space when there is one near the end
// and never inside a UTF-8 sequence.
static size_t piece_length(const char *p) {
    const char *newline = strchr(p, '\n');
    size_t length = newline ? (size_t)(newline - p) : strlen(p);
    if (length <= kMaxPiece) {
        return length;
    }
    for (size_t k = kMaxPiece; k > kMaxPiece * 3 / 4; --k) {
        if (p[k - 1] == ' ') {
            return k;
        }
    }
    const char *cut = g_utf8_find_prev_char(p, p + kMaxPiece + 1);
    return cut && cut > p ? (size_t)(cut - p) : kMaxPiece;
}

typedef struct {
    cairo_t *cr;
    PangoContext *context;
    double left, top, bottom, content_width;
    double y;          // where the next line goes on the current page
    bool page_used;    // something was drawn on the current page
    int pages;
    long unknown;
} page_flow;

static void next_page(page_flow *flow) {
    cairo_show_page(flow->cr);
    flow->pages += 1;
    flow->y = flow->top;
    flow->page_used = false;
}

static PangoLayout *make_layout(page_flow *flow, const char *text, size_t length, const PangoFontDescription *font) {
    PangoLayout *layout = pango_layout_new(flow->context);
    pango_layout_set_font_description(layout, font);
    pango_layout_set_width(layout, (int)(flow->content_width * PANGO_SCALE));
    // Long URLs and CJK runs have no spaces to break at.
    pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR);
    pango_layout_set_text(layout, text, (int)length);
    flow->unknown += pango_layout_get_unknown_glyphs_count(layout);
    return layout;
}

static double first_line_height(PangoLayout *layout) {
    PangoLayoutIter *iter = pango_layout_get_iter(layout);
    PangoRectangle logical;
    pango_layout_iter_get_line_extents(iter, NULL, &logical);
    pango_layout_iter_free(iter);
    return (double)logical.height / PANGO_SCALE;
}

static double layout_height(PangoLayout *layout) {
    int width, height;
    pango_layout_get_size(layout, &width, &height);
    return (double)height / PANGO_SCALE;
}

// Draws the layout line by line from flow->y, starting a new page whenever
// the next line would cross the bottom margin: a long text continues on the
// next page instead of being cut off.
static void flow_layout(page_flow *flow, PangoLayout *layout) {
    PangoLayoutIter *iter = pango_layout_get_iter(layout);
    double offset = flow->y; // page y of the layout's origin
    double end = flow->y;
    do {
        PangoRectangle logical;
        pango_layout_iter_get_line_extents(iter, NULL, &logical);
        double top = (double)logical.y / PANGO_SCALE;
        double bottom = (double)(logical.y + logical.height) / PANGO_SCALE;
        if (offset + bottom > flow->bottom && flow->page_used) {
            next_page(flow);
            offset = flow->top - top;
        }
        // Line extents include the alignment offset, so right-to-left
        // paragraphs stay right-aligned.
        double baseline = (double)pango_layout_iter_get_baseline(iter) / PANGO_SCALE;
        cairo_move_to(flow->cr, flow->left + (double)logical.x / PANGO_SCALE, offset + baseline);
        pango_cairo_show_layout_line(flow->cr, pango_layout_iter_get_line_readonly(iter));
        flow->page_used = true;
        end = offset + bottom;
    } while (pango_layout_iter_next_line(iter));
    pango_layout_iter_free(iter);
    flow->y = end;
}

// Draws text paragraph by paragraph. keep_after is room needed below the
// first paragraph on the same page: a heading at the foot of a page with its
// text on the next reads as an annotation without text.
static void flow_text(page_flow *flow, const char *text, const PangoFontDescription *font, double gray,
                      double keep_after) {
    char *shown = displayable(text);
    cairo_set_source_rgb(flow->cr, gray, gray, gray);
    const char *p = shown;
    bool first = true;
    do {
        size_t length = piece_length(p);
        PangoLayout *layout = make_layout(flow, p, length, font);
        if (first && flow->page_used) {
            double need = layout_height(layout) + keep_after;
            if (flow->y + need > flow->bottom && need <= flow->bottom - flow->top) {
                next_page(flow);
            }
        }
        first = false;
        flow_layout(flow, layout);
        g_object_unref(layout);
        p += length;
        if (*p == '\n') {
            ++p;
        }
    } while (*p);
    g_free(shown);
}

static double clamp_side(double side) {
    return side < kMinPageSide ? kMinPageSide : side > kMaxPageSide ? kMaxPageSide : side;
}

static PangoFontMap *fontmap(void) {
    if (!shared_fontmap) {
        shared_fontmap = pango_cairo_font_map_new();
    }
    return shared_fontmap;
}

static void render(const hs_entry *entries, size_t count, const hs_layout *layout, cairo_surface_t *surface,
                   hs_result *result) {
    double width = clamp_side(layout->width);
    double height = clamp_side(layout->height);
    double margin = fmin(width, height) * 0.08;
    margin = margin < 18 ? 18 : margin > 54 ? 54 : margin;

    cairo_t *cr = cairo_create(surface);
    PangoContext *context = pango_font_map_create_context(fontmap());
    // The surface's unit is the point: text sizes in points need 72 dpi.
    pango_cairo_context_set_resolution(context, 72);
    cairo_font_options_t *options = cairo_font_options_create();
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE);
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF);
    pango_cairo_context_set_font_options(context, options);
    cairo_font_options_destroy(options);
    // Rounding to whole device units is for pixels; in a PDF it only makes
    // spacing uneven.
    pango_context_set_round_glyph_positions(context, FALSE);
    pango_cairo_update_context(cr, context);

    PangoFontDescription *body = pango_font_description_from_string(layout->font ? layout->font : "DejaVu Sans 10");
    if (pango_font_description_get_size(body) <= 0) {
        pango_font_description_set_size(body, 10 * PANGO_SCALE);
    }
    PangoFontDescription *bold = pango_font_description_copy(body);
    pango_font_description_set_weight(bold, PANGO_WEIGHT_BOLD);
    PangoFontDescription *large = pango_font_description_copy(bold);
    double body_size = (double)pango_font_description_get_size(body) / PANGO_SCALE;
    if (pango_font_description_get_size_is_absolute(body)) {
        pango_font_description_set_absolute_size(large, body_size * 1.4 * PANGO_SCALE);
    } else {
        pango_font_description_set_size(large, (int)(body_size * 1.4 * PANGO_SCALE));
    }

    page_flow flow = {
        .cr = cr, .context = context,
        .left = margin, .top = margin, .bottom = height - margin, .content_width = width - 2 * margin,
        .y = margin, .page_used = false, .pages = 1, .unknown = 0,
    };
    double gap = body_size * 0.9;
    PangoLayout *probe = pango_layout_new(context);
    pango_layout_set_font_description(probe, body);
    pango_layout_set_text(probe, "Xg", -1);
    double body_line = first_line_height(probe);
    g_object_unref(probe);

    if (layout->title && *layout->title) {
        flow_text(&flow, layout->title, large, 0, 0);
        flow.y += body_size * 0.4;
    }
    if (layout->subtitle && *layout->subtitle) {
        flow_text(&flow, layout->subtitle, body, 0.35, 0);
    }
    flow.y += flow.page_used ? gap * 1.5 : 0;

    for (size_t i = 0; i < count; ++i) {
        const char *text = entries[i].text;
        bool has_text = text && *text;
        flow_text(&flow, entries[i].heading ? entries[i].heading : "", bold, 0, has_text ? 2 + body_line : 0);
        if (has_text) {
            flow.y += 2;
            flow_text(&flow, text, body, 0.15, 0);
        }
        flow.y += gap;
    }
    cairo_show_page(cr);

    pango_font_description_free(large);
    pango_font_description_free(bold);
    pango_font_description_free(body);
    g_object_unref(context);
    cairo_destroy(cr);
    result->pages = flow.pages;
    result->unshown_characters = flow.unknown;
}

int hs_render_summary(const hs_entry *entries, size_t count, const hs_layout *layout, int output_fd,
                      hs_result *result, hs_error *err) {
    set_error(err, HS_OK, 0, "%s", "");
    if (!layout || !result || (count > 0 && !entries) || output_fd < 0 || !isfinite(layout->width) ||
        !isfinite(layout->height) || layout->width <= 0 || layout->height <= 0) {
        set_error(err, HS_E_ARGUMENT, 0, "invalid argument to hs_render_summary");
        return -1;
    }
    const char *description = layout->output_description ? layout->output_description : "summary";
    result->pages = 0;
    result->unshown_characters = 0;

    pthread_mutex_lock(&render_lock);
    output_sink sink = {.fd = output_fd, .write_errno = 0};
    cairo_surface_t *surface = cairo_pdf_surface_create_for_stream(write_to_fd, &sink, clamp_side(layout->width),
                                                                   clamp_side(layout->height));
    if (cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS) {
        if (layout->metadata_title) {
            char *title = g_utf8_make_valid(layout->metadata_title, -1);
            cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, title);
            g_free(title);
        }
        cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "hotfolder");
        render(entries, count, layout, surface, result);
        // Finishing writes the fonts and the cross-reference table: write
        // errors of the last bytes only show up here.
        cairo_surface_finish(surface);
    }
    cairo_status_t status = cairo_surface_status(surface);
    cairo_surface_destroy(surface);
    pthread_mutex_unlock(&render_lock);

    if (sink.write_errno != 0 || status != CAIRO_STATUS_SUCCESS) {
        result->pages = 0;
        result->unshown_characters = 0;
    }
    if (sink.write_errno != 0) {
        set_error(err, HS_E_SYSTEM, sink.write_errno, "writing %s: %s", description, g_strerror(sink.write_errno));
        return -1;
    }
    if (status != CAIRO_STATUS_SUCCESS) {
        set_error(err, HS_E_RENDER, status == CAIRO_STATUS_NO_MEMORY ? ENOMEM : 0, "making the summary %s: %s",
                  description, cairo_status_to_string(status));
        return -1;
    }
    return 0;
}
