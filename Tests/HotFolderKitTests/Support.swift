import Foundation
import XCTest
@testable import HotFolderKit

/// A fresh temporary folder per test, removed afterwards.
final class TemporaryFolder {
    let path: String

    init(_ name: String = "hf") {
        var template = Array("/tmp/\(name)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        path = made.map { String(cString: $0) } ?? "/tmp/\(name)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String {
        let p = path + "/" + name
        try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }
}

/// Polls `condition` until it holds or `timeout` passes (no fixed sleeps as
/// synchronization: the deadline is generous for a loaded 2-core machine).
func waitUntil(timeout: Double = 30, _ what: String = "condition", file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return }
        usleep(10_000)
    }
    XCTFail("timed out after \(timeout) s waiting for \(what)", file: file, line: line)
}

func files(in path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
}

/// The shared corpus of real PDFs, when this checkout sits beside ../shared.
enum Corpus {
    static var directory: String? {
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [here.deletingLastPathComponent().appendingPathComponent("shared/corpus").path,
                          ProcessInfo.processInfo.environment["HOTFOLDER_CORPUS"] ?? ""]
        return candidates.first { !$0.isEmpty && FileManager.default.fileExists(atPath: $0 + "/INDEX.tsv") }
    }

    static func require() throws -> String {
        guard let d = directory else { throw XCTSkip("../shared/corpus is absent: corpus tests skipped (set HOTFOLDER_CORPUS to run them)") }
        return d
    }
}
