import Foundation

/// The signature of `LLVMFuzzerTestOneInput`.
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

#if HOTFOLDER_FUZZING
// libFuzzer's driver (compiler-rt/lib/fuzzer/FuzzerInterface.h), linked in by
// -sanitize=fuzzer: `int LLVMFuzzerRunDriver(int *argc, char ***argv,
// int (*UserCb)(const uint8_t *Data, size_t Size))`. Declared here rather than
// through a C module: for three pointer arguments and an int result, Swift's
// calling convention passes and returns exactly as C's does.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: FuzzCallback
) -> CInt
#endif

/// The `main` of every fuzz target.
///
/// Built by `scripts/fuzz` (`-sanitize=fuzzer -D HOTFOLDER_FUZZING`), it hands
/// over to libFuzzer with all of libFuzzer's options. SwiftPM links an
/// executable target's own entry point as `main`, so the target keeps an
/// `@main` and calls libFuzzer's driver rather than relying on libFuzzer's
/// `main`.
///
/// In a normal build it is a regression runner: every file named on the
/// command line, and every file inside a named folder, is passed once to the
/// target (arguments starting with `-` are ignored, so a libFuzzer command line
/// works unchanged). A crash is the failure; it exits 0 when all inputs ran.
public func fuzzMain(_ callback: FuzzCallback) -> Never {
    #if HOTFOLDER_FUZZING
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
    #else
    let arguments = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("-") }
    guard !arguments.isEmpty else {
        let name = (CommandLine.arguments.first ?? "fuzzer") as NSString
        FileHandle.standardError.write(Data("""
            usage: \(name.lastPathComponent) FILE_OR_FOLDER...
            Runs every input once through the fuzz target (a regression run). Built
            with -sanitize=fuzzer by scripts/fuzz, it is a libFuzzer fuzzer instead.

            """.utf8))
        exit(2)
    }
    var count = 0
    for path in arguments {
        for file in inputFiles(path) {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                exit(1)
            }
            _ = data.withUnsafeBytes { raw in
                callback(raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
            }
            count += 1
        }
    }
    print("ran \(count) inputs")
    exit(0)
    #endif
}

/// `path` itself, or the regular files inside it (recursively, sorted) when it is a folder.
private func inputFiles(_ path: String) -> [String] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
        return [path]
    }
    let names = (FileManager.default.subpaths(atPath: path) ?? []).sorted()
    return names.map { path + "/" + $0 }.filter {
        var d: ObjCBool = false
        return FileManager.default.fileExists(atPath: $0, isDirectory: &d) && !d.boolValue
    }
}

/// Stops the fuzzer with a report when an invariant of the code under test does not hold.
public func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                  file: StaticString = #fileID, line: UInt = #line) {
    if !condition() {
        fatalError("invariant violated: \(message())", file: file, line: line)
    }
}

/// The input as text. Invalid UTF-8 is repaired rather than rejected (as
/// `ServiceConfiguration.load` would reject it), so that every input reaches
/// the parser.
public func text(_ data: UnsafePointer<UInt8>?, _ size: Int) -> String {
    String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
}

/// The most lines a parser can see in `text`: every LF and every CR may end
/// one (CRLF ends one, so this is a bound, not the count).
public func maxLines(_ text: String) -> Int {
    text.utf8.reduce(1) { $1 == UInt8(ascii: "\n") || $1 == UInt8(ascii: "\r") ? $0 + 1 : $0 }
}
