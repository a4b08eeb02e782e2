// Fuzz target: the PDF shim's open path, as the pipeline drives it — open
// (again with a password when one is needed), info, title, annotation counts,
// then generate with a page selection and an annotation mode into a scratch
// file, which must open again with the pages asked for. Every failure of
// libqpdf must come back as a PDFError, never as a crash.
import FuzzSupport
import Glibc
import HotFolderKit

@main
enum PDFOpenFuzz {
    static func main() { fuzzMain(LLVMFuzzerTestOneInput) }
}

/// qpdf may legitimately take long on big inputs; small ones find the same bugs faster.
let maxInputSize = 64 << 10
/// Per-page calls stop here, so that a page tree of thousands of pages stays fast.
let maxPagesVisited = 64

/// One unlinked scratch file for every input and one for every output, reused.
func scratchFile(_ name: String) -> FileDescriptor {
    var template = Array("\(scratchDirectory())/hotfolder-fuzz-\(name)-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard fd >= 0 else { fatalError("cannot create a scratch file in \(scratchDirectory()): errno \(errno)") }
    _ = template.withUnsafeBufferPointer { unlink($0.baseAddress!) }
    return FileDescriptor(adopting: fd, path: name)
}

func scratchDirectory() -> String {
    if let dir = getenv("TMPDIR") { return String(cString: dir) }
    return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
}

let input = scratchFile("input.pdf")
let output = scratchFile("output.pdf")

/// Replaces the whole content of `file` with `bytes`.
func fill(_ file: FileDescriptor, _ bytes: UnsafeRawBufferPointer) {
    guard ftruncate(file.rawValue, 0) == 0, lseek(file.rawValue, 0, SEEK_SET) == 0 else { fatalError("cannot reset \(file.path): errno \(errno)") }
    do { try file.write(Array(bytes)) } catch { fatalError("\(error)") }
}

/// A cheap, stable choice from the input (FNV-1a), for the options of this run.
func choice(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    bytes.reduce(0xcbf29ce484222325) { ($0 ^ UInt64($1)) &* 0x100000001b3 }
}

func open(_ file: FileDescriptor, description: String) -> PDFDocument? {
    do {
        return try PDFDocument.open(file, description: description, password: nil)
    } catch {
        check(!error.message.isEmpty, "open failed without a message")
        guard error.kind == .passwordNeeded else { return nil }
        // A folder's password, as the pipeline tries it: the encrypted seeds'
        // user password, and the one of ../shared/corpus' enc-*U=view* files.
        for password in ["user", "view"] {
            if let document = try? PDFDocument.open(file, description: description, password: password) { return document }
        }
        return nil
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard size <= maxInputSize else { return -1 }
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    fill(input, bytes)
    let seed = choice(bytes)

    guard let document = open(input, description: "fuzz.pdf") else { return 0 }
    let info: PDFInfo
    do {
        info = try document.info()
        _ = try document.title()
    } catch {
        check(!error.message.isEmpty, "info failed without a message")
        return 0
    }
    check(info.pages >= 0 && info.annotations >= 0, "impossible info \(info)")
    guard info.pages > 0 else { return 0 }

    var annotated: [Int] = []
    for page in 0..<min(info.pages, maxPagesVisited) {
        do {
            let count = try document.annotationCount(page: page)
            check(count >= 0, "page \(page): \(count) annotations")
            if count > 0 { annotated.append(page) }
        } catch {
            check(!error.message.isEmpty, "annotationCount failed without a message")
        }
    }
    // Out of range is an error value too.
    check((try? document.annotationCount(page: info.pages)) == nil, "annotationCount past the last page succeeded")

    let selections: [PageSelection] = [.all, .first, .last, .annotated, .ranges([PageRange(lower: 2, upper: nil)])]
    let selection = selections[Int(seed % UInt64(selections.count))]
    let indexes = selection.pageIndexes(pageCount: info.pages) { annotated }
    guard !indexes.isEmpty else { return 0 }
    // flatten-for-print is what print folders do; the other modes get a share.
    let modes: [PDFDocument.AnnotationMode] = [.flattenForPrint, .flattenForPrint, .flatten, .remove, .embed]
    let mode = modes[Int((seed >> 8) % UInt64(modes.count))]
    let title: String? = (seed >> 16) % 2 == 0 ? nil : "Fuzz ✓ (\(size))"

    fill(output, UnsafeRawBufferPointer(start: nil, count: 0))
    do {
        try document.generate(pages: indexes.count == info.pages ? nil : indexes, annotations: mode, title: title, output: output)
    } catch {
        check(!error.message.isEmpty, "generate failed without a message")
        _ = document.warnings
        return 0
    }
    _ = document.warnings

    // What the service writes must be a PDF with the pages it selected.
    guard let result = open(output, description: "generated.pdf") else {
        fatalError("the generated PDF (\(mode), pages \(indexes.prefix(10))) does not open")
    }
    do {
        let pages = try result.info().pages
        check(pages == indexes.count, "generated \(pages) pages, selected \(indexes.count) (\(selection), \(mode))")
        if let title {
            let written = try result.title()
            check(written == title, "title \(written ?? "nil") written for \(title)")
        }
    } catch {
        fatalError("the generated PDF (\(mode)) cannot be read: \(error)")
    }
    return 0
}
