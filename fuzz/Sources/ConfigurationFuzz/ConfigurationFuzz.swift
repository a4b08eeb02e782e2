// Fuzz target: the configuration parser (`ServiceConfiguration.parse`) and what
// `hotfolder check` prints of its result. Any text must come back as a
// configuration or as problems, never as a crash.
import FuzzSupport
import HotFolderKit

@main
enum ConfigurationFuzz {
    static func main() { fuzzMain(LLVMFuzzerTestOneInput) }
}

/// A path that does not exist, so relative paths resolve to the same place on every machine.
let configurationFile = "/nonexistent/hotfolder-fuzz/hotfolders.conf"

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = text(data, size)
    // Problems never point past the last line.
    let lines = maxLines(input)
    do {
        let config = try ServiceConfiguration.parse(text: input, file: configurationFile)
        check(!config.folders.isEmpty, "accepted a configuration without folders")
        var names = Set<String>()
        for folder in config.folders {
            check(names.insert(folder.name).inserted, "folder \(folder.name) accepted twice")
            check(folder.path.hasPrefix("/") && folder.path != "/", "folder \(folder.name): path \(folder.path)")
            check(!folder.destinations.isEmpty, "folder \(folder.name) has no destination")
            for path in [folder.path, folder.doneFolder, folder.failedFolder] + folder.destinations.map(\.exportFolder) where !path.isEmpty {
                check(path.hasPrefix("/") && !path.split(separator: "/").contains { $0 == "." || $0 == ".." },
                      "folder \(folder.name): path not normalized: \(path)")
            }
            for sharing in folder.destinations {
                checkNames(sharing, folder: folder)
            }
        }
        // `hotfolder check` prints this for every accepted configuration.
        _ = config.resolvedDescription
    } catch {
        check(!error.problems.isEmpty, "rejected without a problem")
        for problem in error.problems {
            check((0...lines).contains(problem.line), "problem on line \(problem.line) of \(lines): \(problem)")
            check(!problem.message.isEmpty, "empty problem message on line \(problem.line)")
            _ = problem.description
        }
    }
    return 0
}

/// The name templates of an accepted configuration always render to a single,
/// safe file name, whatever the document's title or name.
func checkNames(_ sharing: SharingConfiguration, folder: FolderConfiguration) {
    let values: [NameTemplate.Placeholder: String] = [
        .stem: folder.name, .ext: folder.path, .title: folder.password ?? "",
        .folder: folder.name, .date: "2024-01-31", .time: "12-00-00",
    ]
    for template in [sharing.name] + (sharing.title.map { [$0] } ?? []) {
        let name = FileNameSanitizer.fileName(rendered: template.render(values), ext: "pdf")
        check(!name.isEmpty && name != "." && name != ".." && !name.hasPrefix("."), "unsafe file name \"\(name)\"")
        check(!name.contains("/") && !name.unicodeScalars.contains { $0.value == 0 }, "unsafe file name \"\(name)\"")
        check(name.utf8.count <= 255, "file name of \(name.utf8.count) bytes")
    }
}
