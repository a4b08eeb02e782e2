#!/usr/bin/env python3
"""Writes a small annotated PDF for the benchmark (bench/run).

    make-fixture.py [--pages N] OUT.pdf

Every page has 40 lines of text and two annotations of its own, both with an
/AP /N appearance stream:
  - a Square annotation with the Print flag (flattened by every mode);
  - a Text (sticky note) annotation without the Print flag (flattened for
    the screen, dropped by flatten-for-print).
The xref offsets written here are exact; bench/run still passes the file
through `qpdf` to normalize it (compressed streams, a fresh xref).
"""
import sys


def stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< " + dictionary + b" /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def main() -> None:
    args = sys.argv[1:]
    pages = 1
    if len(args) == 3 and args[0] == "--pages":
        pages = int(args[1])
        args = args[2:]
    if len(args) != 1 or pages < 1:
        sys.exit("usage: make-fixture.py [--pages N] OUT.pdf")

    # Objects 1 catalog, 2 pages, 3 font, 4 info; then 6 per page.
    objects: list[bytes] = [b"", b"", b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
                            b"<< /Title (Benchmark fixture) /Producer (hotfolder bench/make-fixture.py) >>"]
    kids = []
    square_ap = b"1 0 0 RG 2 w 1 1 198 98 re S"
    note_ap = b"1 1 0 rg 0 0 0 RG 0.5 w 0.5 0.5 19 19 re B 0 0 0 rg BT /F1 12 Tf 6 5 Td (!) Tj ET"
    for p in range(1, pages + 1):
        first = len(objects) + 1  # page object number
        page, contents, square, square_form, note, note_form = range(first, first + 6)
        kids.append(page)
        text = b"\n".join(
            b"BT /F1 11 Tf 72 %d Td (page %d, line %d: the quick brown fox jumps over the lazy dog) Tj ET"
            % (760 - 16 * i, p, i + 1) for i in range(40))
        objects += [
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            b"/Contents %d 0 R /Annots [%d 0 R %d 0 R] >>" % (contents, square, note),
            stream(b"", text),
            b"<< /Type /Annot /Subtype /Square /Rect [100 300 300 400] /F 4 /C [1 0 0] /P %d 0 R "
            b"/Contents (reviewed, page %d) /T (bench) /AP << /N %d 0 R >> >>" % (page, p, square_form),
            stream(b"/Type /XObject /Subtype /Form /BBox [0 0 200 100]", square_ap),
            b"<< /Type /Annot /Subtype /Text /Rect [400 600 420 620] /F 0 /Name /Comment /P %d 0 R "
            b"/Contents (a sticky note, page %d) /T (bench) /AP << /N %d 0 R >> >>" % (page, p, note_form),
            stream(b"/Type /XObject /Subtype /Form /BBox [0 0 20 20] /Resources << /Font << /F1 3 0 R >> >>", note_ap),
        ]
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % k for k in kids) + b"] /Count %d >>" % pages

    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += (b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n"
            % (len(objects) + 1, xref))
    with open(args[0], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
