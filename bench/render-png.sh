#!/bin/sh
# Measures PNG encoding of a rendered page: poppler::image::save("png")
# against the shim's libpng encoder at several levels and filters, on a
# dense one-page A4 text document at 150 dpi (the numbers quoted in
# Sources/ImageShim/Render.cpp). Usage: bench/render-png.sh [PDF] [DPI]
# Builds a small driver with c++ in a temporary folder; needs the same
# Debian packages as the ImageShim target.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/render-png.XXXXXX)
trap 'rm -rf "$work"' EXIT
dpi=${2:-150}

if [ $# -ge 1 ]; then
    pdf=$1
else
    pdf=$work/text.pdf
    python3 - "$pdf" <<'PY'
import sys
words = "the quick brown fox jumps over a lazy dog while hot folders watch every file land".split()
lines = []
for i in range(64):
    text = " ".join(words[(i + k) % len(words)] for k in range(16))
    lines.append("BT /F1 10 Tf 56 %d Td (%s) Tj ET" % (800 - 12 * i, text))
content = "\n".join(lines)
objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595.276 841.89] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
    "<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
]
out = b"%PDF-1.4\n"
offsets = []
for i, o in enumerate(objects):
    offsets.append(len(out))
    out += ("%d 0 obj\n%s\nendobj\n" % (i + 1, o)).encode()
xref = len(out)
out += ("xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)).encode()
for o in offsets:
    out += ("%010d 00000 n \n" % o).encode()
out += ("trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)).encode()
open(sys.argv[1], "wb").write(out)
PY
fi

cat > "$work/bench.cpp" <<'CPP'
#include "Codecs.hpp"
#include <poppler/cpp/poppler-document.h>
#include <poppler/cpp/poppler-image.h>
#include <poppler/cpp/poppler-page-renderer.h>
#include <poppler/cpp/poppler-page.h>
#include <png.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

static double median_ms(int runs, std::function<void()> const &body) {
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
        auto start = std::chrono::steady_clock::now();
        body();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

static long file_size(std::string const &path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

int main(int argc, char **argv) {
    std::string dir = argv[2];
    double dpi = std::atof(argv[3]);
    std::unique_ptr<poppler::document> doc(poppler::document::load_from_file(argv[1]));
    std::unique_ptr<poppler::page> page(doc->create_page(0));
    poppler::page_renderer renderer;
    renderer.set_render_hint(poppler::page_renderer::antialiasing, true);
    renderer.set_render_hint(poppler::page_renderer::text_antialiasing, true);
    renderer.set_image_format(poppler::image::format_rgb24);
    poppler::image rgb;
    double render = median_ms(5, [&] { rgb = renderer.render_page(page.get(), dpi, dpi); });
    renderer.set_image_format(poppler::image::format_argb32);
    poppler::image argb = renderer.render_page(page.get(), dpi, dpi);
    std::printf("page %dx%d at %g dpi; render (rgb24) %.1f ms\n", rgb.width(), rgb.height(), dpi, render);

    std::string path = dir + "/poppler.png";
    double t = median_ms(3, [&] { argb.save(path, "png", static_cast<int>(dpi)); });
    std::printf("%-36s %7.1f ms %9ld bytes\n", "poppler::image::save png (argb32)", t, file_size(path));
    t = median_ms(3, [&] { rgb.save(path, "png", static_cast<int>(dpi)); });
    std::printf("%-36s %7.1f ms %9ld bytes\n", "poppler::image::save png (rgb24)", t, file_size(path));

    struct Variant { const char *name; int level; int filters; };
    Variant variants[] = {
        {"libpng level 1, NONE", 1, PNG_FILTER_NONE},
        {"libpng level 1, SUB", 1, PNG_FILTER_SUB},
        {"libpng level 1, UP", 1, PNG_FILTER_UP},
        {"libpng level 1, PAETH", 1, PNG_FILTER_PAETH},
        {"libpng level 1, all filters", 1, PNG_ALL_FILTERS},
        {"libpng level 3, NONE", 3, PNG_FILTER_NONE},
        {"libpng level 6, NONE", 6, PNG_FILTER_NONE},
        {"libpng level 6, SUB", 6, PNG_FILTER_SUB},
        {"libpng level 6, all filters", 6, PNG_ALL_FILTERS},
    };
    std::unique_ptr<hishim::FdSink> sink(new hishim::FdSink);
    for (auto const &v : variants) {
        path = dir + "/ours.png";
        t = median_ms(9, [&] {
            int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            hishim::sink_init(sink.get(), fd);
            hishim::CodecStatus status;
            hishim::status_init(&status);
            hishim::encode_png(sink.get(), reinterpret_cast<const unsigned char *>(rgb.const_data()), rgb.width(),
                               rgb.height(), rgb.bytes_per_row(), 3, dpi, v.level, v.filters, &status);
            close(fd);
        });
        std::printf("%-36s %7.1f ms %9ld bytes\n", v.name, t, file_size(path));
    }
    path = dir + "/ours.jpg";
    t = median_ms(9, [&] {
        int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        hishim::sink_init(sink.get(), fd);
        hishim::CodecStatus status;
        hishim::status_init(&status);
        hishim::encode_jpeg(sink.get(), reinterpret_cast<const unsigned char *>(rgb.const_data()), rgb.width(),
                            rgb.height(), rgb.bytes_per_row(), 3, dpi, 85, &status);
        close(fd);
    });
    std::printf("%-36s %7.1f ms %9ld bytes\n", "libjpeg quality 85", t, file_size(path));
    return 0;
}
CPP
c++ -std=c++17 -O2 -I"$here/Sources/ImageShim" -I"$here/Sources/ImageShim/include" \
    "$work/bench.cpp" "$here/Sources/ImageShim/Codecs.cpp" \
    -lpoppler-cpp -lpng16 -ljpeg -lz -o "$work/bench"
"$work/bench" "$pdf" "$work" "$dpi"
