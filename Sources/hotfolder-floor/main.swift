import CSystem
import Foundation
import Glibc
import HotFolderKit

// The benchmark's floor: the same libqpdf work the service does for each
// document (open, flatten, write a new file), in a tight loop in one process
// with as many threads as the service has workers, and nothing else: no
// watching, no claiming, no journal.
//
// With --exactly-once WORKDIR it also does the least file work that any hot
// folder needs to never lose, never repeat and never half-publish a document,
// in the cheapest order (each thread in batches, so that one sync serves many
// documents): claim (rename the input into WORKDIR/claimed), write the output
// under a temporary name, sync, rename it to its final name, sync, move the
// input to WORKDIR/done. The bench reports the service against both: what
// libqpdf costs, and what libqpdf plus those guarantees cost.
//
//   hotfolder-floor --threads N --annotations flatten|flatten-for-print
//                   [--exactly-once WORKDIR [--batch B]] OUTDIR FILE...
// prints: files=N failures=F seconds=S files_per_second=R [syncs=K]

var threads = 2
var mode: PDFDocument.AnnotationMode = .flatten
var workPath: String?
var batch = 16
var arguments = Array(CommandLine.arguments.dropFirst())
func usage(_ message: String) -> Never {
    FileHandle.standardError.write(Data("hotfolder-floor: \(message)\nusage: hotfolder-floor [--threads N] [--annotations MODE] [--exactly-once WORKDIR [--batch B]] OUTDIR FILE...\n".utf8))
    exit(64)
}
while let first = arguments.first, first.hasPrefix("--") {
    arguments.removeFirst()
    guard let value = arguments.first else { usage("\(first) needs a value") }
    arguments.removeFirst()
    switch first {
    case "--threads": threads = max(1, Int(value) ?? 2)
    case "--annotations": mode = value == "flatten-for-print" ? .flattenForPrint : .flatten
    case "--exactly-once": workPath = value
    case "--batch": batch = max(1, Int(value) ?? 16)
    default: usage("unknown option \(first)")
    }
}
guard arguments.count >= 2 else { usage("an output folder and files are needed") }
// The same allocator settings as the service's generators: the floor does the same work.
PDFDocument.tuneAllocator()
let annotationMode = mode
let batchSize = batch
let files = Array(arguments.dropFirst())
// Opened once, up front: a floor that cannot write must fail loudly, not
// report an impossible rate for work it never did.
let out: Directory
let claimed: Directory?
let done: Directory?
do {
    out = try Directory(path: arguments[0])
    if let workPath {
        let work = try Directory(path: workPath)
        claimed = try work.subdirectory("claimed", create: true)
        done = try work.subdirectory("done", create: true)
    } else {
        (claimed, done) = (nil, nil)
    }
} catch {
    usage("\(error)")
}
let inputs: [Directory]
do {
    var opened: [String: Directory] = [:]
    inputs = try files.map { path in
        let folder = (path as NSString).deletingLastPathComponent
        if let d = opened[folder] { return d }
        let d = try Directory(path: folder)
        opened[folder] = d
        return d
    }
} catch {
    usage("\(error)")
}

let next = NSLock()
nonisolated(unsafe) var index = 0
nonisolated(unsafe) var failures = 0
nonisolated(unsafe) var syncs = 0
@Sendable func fail(_ what: String, _ error: any Error) {
    next.lock()
    failures += 1
    next.unlock()
    FileHandle.standardError.write(Data("hotfolder-floor: \(what): \(error)\n".utf8))
}
@Sendable func syncOutputs() throws(SystemError) {
    guard hf_syncfs(out.descriptor.rawValue) == 0 else { throw SystemError("syncfs", path: out.path) }
    next.lock()
    syncs += 1
    next.unlock()
}
/// The next indexes to work on: one at a time, or a batch with --exactly-once.
@Sendable func take() -> Range<Int> {
    next.lock()
    defer { next.unlock() }
    let start = index
    index = min(files.count, index + (claimed == nil ? 1 : batchSize))
    return start..<index
}

let group = DispatchGroup()
let start = Date()
for _ in 0..<threads {
    group.enter()
    Thread {
        defer { group.leave() }
        while true {
            let range = take()
            guard !range.isEmpty else { return }
            var published: [(i: Int, name: String)] = []
            for i in range {
                let name = (files[i] as NSString).lastPathComponent
                do {
                    var source = inputs[i]
                    if let claimed {
                        try source.move(name, to: claimed, as: name, mode: .noReplace)
                        source = claimed
                    }
                    let input = try source.openForReading(name)
                    let document = try PDFDocument.open(input, description: files[i], password: nil)
                    _ = try document.info()
                    let output = try out.createFile(claimed == nil ? "out-\(i).pdf" : ".out-\(i).tmp")
                    try document.generate(pages: nil, annotations: annotationMode, title: nil, output: output)
                    published.append((i, name))
                } catch {
                    fail(files[i], error)
                }
            }
            guard let claimed, let done, !published.isEmpty else { continue }
            do {
                // The outputs' bytes are durable before their final names exist...
                try syncOutputs()
                for p in published { try out.move(".out-\(p.i).tmp", to: out, as: "out-\(p.i).pdf", mode: .noReplace) }
                // ...and the final names before the inputs leave.
                try syncOutputs()
                for p in published { try claimed.move(p.name, to: done, as: p.name, mode: .noReplace) }
            } catch {
                fail("batch at \(files[published[0].i])", error)
            }
        }
    }.start()
}
group.wait()
let seconds = Date().timeIntervalSince(start)
print("files=\(files.count) failures=\(failures) seconds=\(String(format: "%.3f", seconds)) files_per_second=\(String(format: "%.1f", Double(files.count) / seconds))"
      + (claimed == nil ? "" : " syncs=\(syncs)"))
