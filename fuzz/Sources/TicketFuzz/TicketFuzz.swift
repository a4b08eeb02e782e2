// Fuzz target: the job-ticket parser.
//
// TODO: hotfolder has no job-ticket parser yet. The issue that adds `<file>.ticket`
// sidecars (`key = value` lines, parsed like the configuration's INI dialect)
// must point this target at the ticket parser instead (its public entry, or a
// `package` one), drop the INIFile.swift link beside this file, and replace the
// invariants below with the ticket's. Until then it fuzzes `INIFile`, which
// the ticket parser is to reuse: INIFile is internal to HotFolderKit, so this
// module compiles the very same source file (INIFile.swift is a symbolic link
// to Sources/HotFolderKit/Configuration/INIFile.swift) instead of relying on
// `@testable import`, which only debug builds allow.
import FuzzSupport

@main
enum TicketFuzz {
    static func main() { fuzzMain(LLVMFuzzerTestOneInput) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = text(data, size)
    let lines = maxLines(input)
    // A ticket is a sidecar of one document: its lines are entries without a
    // section, so parse them as the body of one.
    for (offset, body) in [(0, input), (1, "[ticket]\n" + input)] {
        let ini = INIFile(text: body, file: "document.pdf.ticket")
        var previousLine = 0
        for section in ini.sections {
            check(section.line > previousLine, "section [\(section.name)] on line \(section.line) after line \(previousLine)")
            check(section.name == section.name.trimmingCharacters(in: .whitespaces), "untrimmed section name \"\(section.name)\"")
            previousLine = section.line
            for entry in section.entries {
                check(entry.line > previousLine && entry.line <= lines + offset, "entry on line \(entry.line) of \(lines + offset)")
                check(entry.key == entry.key.trimmingCharacters(in: .whitespaces), "untrimmed key \"\(entry.key)\"")
                check(entry.value == entry.value.trimmingCharacters(in: .whitespaces), "untrimmed value \"\(entry.value)\"")
                previousLine = entry.line
            }
        }
        for problem in ini.problems {
            check((1...(lines + offset)).contains(problem.line), "problem on line \(problem.line) of \(lines + offset)")
            check(!problem.message.isEmpty, "empty problem message")
        }
    }
    return 0
}
