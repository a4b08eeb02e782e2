import Foundation
import Glibc
import HotFolderKit

// The benchmark's floor: the same libqpdf work the service does for each
// document (open, flatten, write a new file), in a tight loop in one process
// with as many threads as the service has workers, and nothing else: no
// watching, no claiming, no journal.
//
//   hotfolder-floor --threads N --annotations flatten|flatten-for-print OUTDIR FILE...
// prints: files=N seconds=S files_per_second=R

var threads = 2
var mode: PDFDocument.AnnotationMode = .flatten
var arguments = Array(CommandLine.arguments.dropFirst())
while let first = arguments.first, first.hasPrefix("--") {
    arguments.removeFirst()
    guard let value = arguments.first else { break }
    arguments.removeFirst()
    switch first {
    case "--threads": threads = max(1, Int(value) ?? 2)
    case "--annotations": mode = value == "flatten-for-print" ? .flattenForPrint : .flatten
    default: break
    }
}
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: hotfolder-floor [--threads N] [--annotations MODE] OUTDIR FILE...\n".utf8))
    exit(64)
}
// The same allocator settings as the service's generators: the floor does the same work.
PDFDocument.tuneAllocator()
let annotationMode = mode
let outputDirectory = arguments.removeFirst()
let files = arguments
let next = NSLock()
nonisolated(unsafe) var index = 0
nonisolated(unsafe) var failures = 0
let group = DispatchGroup()
let start = Date()
for _ in 0..<threads {
    group.enter()
    Thread {
        defer { group.leave() }
        guard let out = try? Directory(path: outputDirectory) else { return }
        while true {
            next.lock()
            let i = index
            index += 1
            next.unlock()
            guard i < files.count else { return }
            let path = files[i]
            do {
                let dir = try Directory(path: (path as NSString).deletingLastPathComponent)
                let input = try dir.openForReading((path as NSString).lastPathComponent)
                let document = try PDFDocument.open(input, description: path, password: nil)
                _ = try document.info()
                let output = try out.createFile("out-\(i).pdf")
                try document.generate(pages: nil, annotations: annotationMode, title: nil, output: output)
            } catch {
                next.lock()
                failures += 1
                next.unlock()
            }
        }
    }.start()
}
group.wait()
let seconds = Date().timeIntervalSince(start)
print("files=\(files.count) failures=\(failures) seconds=\(String(format: "%.3f", seconds)) files_per_second=\(String(format: "%.1f", Double(files.count) / seconds))")
