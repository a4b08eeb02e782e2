import Foundation
import Glibc

/// What the pipeline learned about a document.
public struct DocumentFacts: Sendable, Codable, Equatable {
    public var type: ContentType
    public var pages: Int = 0
    public var title: String?
    public var encrypted = false
    public var allowPrint = true
    public var allowPrintHighResolution = true
    /// The PDF's permissions allow changing its annotations (flattening or removing them).
    public var allowModifyAnnotations = true
    public var annotations = 0
    public var signed = false
}

/// One file staged in the job folder for a destination.
public struct StagedFile: Sendable, Codable, Equatable {
    public enum Role: String, Sendable, Codable {
        /// The generated document (or the original).
        case document
        /// One page as an image (image output).
        case page
        /// `<name>.preview.png` of the first page (export.preview).
        case preview
        /// `<name>.annotations.json` (annotations = summary).
        case annotations
    }

    /// File name inside the job folder.
    public var file: String
    public var role: Role
    /// The page of the document an image shows (1-based).
    public var page: Int?
}

/// What was generated for one destination, waiting in the job folder.
public struct StagedOutput: Sendable, Codable, Equatable {
    public var destination: DestinationKind
    public var files: [StagedFile]
    public var format: FileFormat
    public var pages: String
    public var annotations: AnnotationOption
    /// Extension of the delivered document or images, without the dot.
    public var ext: String
    /// Pages in the output (0 for an original).
    public var pageCount: Int
    /// Pages of the document it came from (for zero-padded page labels).
    public var documentPages: Int = 0
    /// A job ticket's choices that the destination applies.
    public var copies: Int?
    public var sides: String?
    public var name: String?

    /// The document's staged file (for an image output: the first page).
    public var file: String { files.first?.file ?? "" }
}

public struct PipelineResult: Sendable, Codable, Equatable {
    public var facts: DocumentFacts
    public var outputs: [StagedOutput]
    public var warnings: [String]
    /// Sanitization's notes (a skipped summary, …): logged, not warnings.
    public var notes: [String] = []
}

/// The generation pipeline: (claimed original, folder configuration) → staged
/// files + warnings. It keeps no state between documents, so it can run in the
/// service, in a test, or in a worker process.
public struct Pipeline {
    public let folder: FolderConfiguration
    /// Holds the original and receives the staged outputs.
    public let job: JobFolder
    public let now: Date
    /// The folder's counter value for this document ({n}).
    public let number: Int?

    public init(folder: FolderConfiguration, job: JobFolder, now: Date = Date(), number: Int? = nil) {
        self.folder = folder
        self.job = job
        self.now = now
        self.number = number
    }

    /// The job's ticket, moved into the job folder with the document.
    public static let ticketFile = ".ticket"
    /// An image document converted to PDF, generated from like a dropped PDF
    /// (named like a staged output, so that the leftovers of an interrupted
    /// generation are removed with them).
    static let convertedFile = JobFolder.outputPrefix + "converted.pdf"

    public func run() throws(JobFailure) -> PipelineResult {
        let name = job.originalName
        // The type is checked before opening (opening a device can have effects)
        // and again on the descriptor (the name could be swapped in between).
        if let before = try? job.directory.status(job.originalFile), let problem = Self.notARegularFile(before) {
            throw JobFailure(.identify, "\"\(name)\" is \(problem); only regular files are documents", remedy: "Drop a regular file.")
        }
        let input: FileDescriptor
        do {
            input = try job.directory.openForReading(job.originalFile)
        } catch {
            if error.errno == ELOOP {
                throw JobFailure(.identify, "\"\(name)\" is a symbolic link; only regular files are documents", remedy: "Drop the file itself, not a link to it.")
            }
            throw JobFailure(.identify, "cannot open the file: \(error)", remedy: "Check that the service may read the file, then drop it again.")
        }
        let st: stat
        let prefix: [UInt8]
        do {
            st = try input.stat()
            if let problem = Self.notARegularFile(st) {
                throw JobFailure(.identify, "\"\(name)\" is \(problem); only regular files are documents", remedy: "Drop a regular file.")
            }
            if st.st_nlink > 1 {
                // Another name of the same file may lie outside the drop folder,
                // somewhere the person who dropped it could not read.
                throw JobFailure(.identify, "\"\(name)\" is a hard link (the file has \(st.st_nlink) names); hard-linked files are not taken as documents", remedy: "Drop a copy of the file instead of a link to it.")
            }
            if Int64(st.st_size) > folder.maxFileSize {
                throw JobFailure(.identify, "the file is \(Self.bytes(Int64(st.st_size))), more than this folder's max-file-size of \(Self.bytes(folder.maxFileSize))", remedy: "Drop a smaller file, or raise max-file-size for this folder.")
            }
            prefix = try input.readPrefix(1024)
        } catch let error as SystemError {
            throw JobFailure(.identify, "cannot read the file: \(error)", remedy: "Check the file and drop it again.")
        } catch let failure as JobFailure {
            throw failure
        } catch {
            throw JobFailure(.identify, "\(error)", remedy: "Drop the file again.")
        }
        let type = ContentType.identify(prefix: prefix, size: Int(st.st_size))
        var facts = DocumentFacts(type: type)
        guard type != .empty else { throw Self.notAPDF(type, name: name) }
        let ticket = try readTicket()

        var generation = OutputStager(pipeline: self, input: input)
        var unreadableImage: JobFailure?
        switch type {
        case .pdf:
            try generation.openPDF(into: &facts)
        case .jpeg, .png, .tiff:
            do {
                facts.pages = try ImageConverter.probe(input, description: name).pages
            } catch {
                // Only a problem where the image is to be converted; as an
                // original it goes as it is.
                facts.pages = 1
                unreadableImage = JobFailure(.identify, "\"\(name)\" is \(type.phrase) that cannot be read: \(error.message)", remedy: "Open it in an image viewer, save it anew (JPEG, PNG or TIFF) and drop that, or a PDF.")
            }
        default:
            break
        }

        var document = OptionResolver.Document(type: type, pages: facts.pages, annotations: facts.annotations)
        document.annotationsLocked = !facts.allowModifyAnnotations
        var resolved: [(SharingConfiguration, ResolvedOptions)] = []
        for sharing in folder.destinations {
            let options: ResolvedOptions
            do {
                options = try OptionResolver.resolve(sharing, document: document, ticket: ticket?.choices(for: sharing.destination))
            } catch {
                if error.step == .options && !document.convertible && !sharing.fileFormats.contains(.original) {
                    throw Self.notAPDF(type, name: name)
                }
                throw error
            }
            if case .unavailable(let why) = DocumentFeatures.availability(of: sharing.destination, format: options.format, facts: facts) {
                throw JobFailure(sharing.destination == .print ? .print : .export, why, remedy: "Ask the author for a copy that allows it.")
            }
            if sharing.destination == .print && type == .pdf && options.format != .original {
                if !facts.allowPrintHighResolution {
                    generation.warnings.append("the PDF allows only low-resolution printing")
                }
            }
            if let unreadableImage, options.format != .original { throw unreadableImage }
            resolved.append((sharing, options))
        }

        var outputs: [StagedOutput] = []
        var notes: [String] = []
        for (sharing, options) in resolved {
            notes += options.notes
            var output = try generation.stage(sharing, options, facts: &facts)
            output.copies = options.copies == sharing.copies ? nil : options.copies
            output.sides = options.sides == sharing.sides ? nil : options.sides
            output.name = options.name
            outputs.append(output)
        }
        generation.finish()
        return PipelineResult(facts: facts, outputs: outputs, warnings: Self.unique(generation.warnings), notes: notes)
    }

    /// The job ticket, if one came with the document.
    func readTicket() throws(JobFailure) -> JobTicket? {
        guard job.mayHaveTicket else { return nil }
        let notAFile = JobFailure(.ticket, "the job ticket is not a plain file (a link, a hard link, a FIFO or a device); it was not read",
                                  remedy: "Drop the ticket itself as a regular file, then the document again.")
        let bytes: [UInt8]
        do {
            let file = try job.openForReading(Self.ticketFile)
            // Checked on the descriptor before reading: a ticket that is another
            // name of some file must not have that file's lines quoted in an error.
            let st = try file.stat()
            guard (st.st_mode & S_IFMT) == S_IFREG, st.st_nlink == 1 else { throw notAFile }
            bytes = try file.readAll(limit: JobTicket.maxSize)
        } catch let failure as JobFailure {
            throw failure
        } catch let error as SystemError {
            // Most documents come without one: opening is the one look needed.
            if error.errno == ENOENT { return nil }
            if error.errno == ELOOP { throw notAFile }
            throw JobFailure(.ticket, "cannot read the job ticket: \(error)", remedy: "Drop the document and its ticket again.", transient: error.isTransient)
        } catch {
            throw JobFailure(.ticket, "cannot read the job ticket: \(error)", remedy: "Drop the document and its ticket again.")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw JobFailure(.ticket, "the job ticket is not UTF-8 text", remedy: "Save the ticket as UTF-8 text (key = value lines) and drop both again.")
        }
        switch JobTicket.parse(text, file: job.originalName + JobTicket.suffix) {
        case .success(let ticket): return ticket
        case .failure(let problems):
            throw JobFailure(.ticket, "the job ticket is not valid: \(problems)", remedy: "Correct the ticket and drop the document and its ticket again.")
        }
    }

    func pageIndexes(_ selection: PageSelection, document: PDFDocument, facts: DocumentFacts, sharing: SharingConfiguration) throws(JobFailure) -> [Int] {
        var annotated: [Int] = []
        if selection == .annotated {
            do {
                for page in 0..<facts.pages where try document.annotationCount(page: page) > 0 { annotated.append(page) }
            } catch {
                throw JobFailure(.open, "cannot read the annotations: \(error.message)", remedy: "Save the document anew in a PDF viewer and drop it again.")
            }
        }
        let indexes = selection.pageIndexes(pageCount: facts.pages) { annotated }
        let key = "\(sharing.destination.rawValue).pages"
        guard !indexes.isEmpty else {
            if selection == .annotated {
                throw JobFailure(.options, "\(key) = annotated, but no page of this document carries annotations", remedy: "Drop an annotated document, or allow another page selection in \(key) (e.g. annotated, all).")
            }
            throw JobFailure(.options, "\(key) = \(selection) selects no page of this \(facts.pages)-page document", remedy: "Drop a document that has those pages, or change \(key).")
        }
        return indexes
    }

    func open(_ input: FileDescriptor) throws(JobFailure) -> PDFDocument {
        do {
            return try PDFDocument.open(input, description: job.originalName, password: nil)
        } catch {
            if error.kind == .passwordNeeded {
                guard let password = folder.password else {
                    throw JobFailure(.open, "the PDF is protected by a password", remedy: "Drop a copy without a password, or give the folder's password in the configuration (password = ...).")
                }
                do {
                    return try PDFDocument.open(input, description: job.originalName, password: password)
                } catch let second {
                    if second.kind == .passwordNeeded {
                        throw JobFailure(.open, "the PDF is protected by a password, and the folder's password does not open it", remedy: "Drop a copy without a password, or correct the folder's password.")
                    }
                    throw Self.damaged(second)
                }
            }
            throw Self.damaged(error)
        }
    }

    static func damaged(_ error: PDFError) -> JobFailure {
        if error.kind == .outOfMemory { return outOfMemory }
        if case .system(let e) = error.kind {
            return JobFailure(.open, "cannot read the file: \(String(cString: strerror(e)))", remedy: "Drop the file again.", transient: true)
        }
        return JobFailure(.open, "the PDF is damaged beyond repair: \(error.message)", remedy: "Open it in a PDF viewer and save or print it to a new PDF, then drop that.")
    }

    static let outOfMemory = JobFailure(.generate, "the document needs more memory than a worker may use (job-memory)",
                                        remedy: "Simplify the document (print it to a new PDF), or raise [service] job-memory if such documents are expected.")

    static func notAPDF(_ type: ContentType, name: String) -> JobFailure {
        switch type {
        case .empty:
            return JobFailure(.identify, "the file is empty (0 bytes)", remedy: "The copy or scan probably failed; drop the document again.")
        default:
            return JobFailure(.identify, "\"\(name)\" is not a PDF: it seems to be \(type.phrase)", remedy: "Save or export it as PDF and drop the PDF.")
        }
    }

    static func notARegularFile(_ st: stat) -> String? {
        switch st.st_mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    static func bytes(_ n: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@", value, units[unit])
    }

    static func unique(_ warnings: [String]) -> [String] {
        var seen = Set<String>()
        return warnings.filter { seen.insert($0).inserted }
    }

    /// The values of the name template's placeholders for this document.
    public func templateValues(_ facts: DocumentFacts) -> [NameTemplate.Placeholder: String] {
        let (stem, ext) = FileNameSanitizer.split(job.originalName)
        let seconds = Int(now.timeIntervalSince1970)
        return [
            .stem: stem, .ext: ext, .title: facts.title.flatMap { $0.isEmpty ? nil : $0 } ?? stem,
            .folder: folder.name, .date: Clock.format("%Y-%m-%d", seconds: seconds), .time: Clock.format("%H-%M-%S", seconds: seconds),
            .pages: facts.pages > 0 ? String(facts.pages) : "", .n: number.map(String.init) ?? "", .page: "",
        ]
    }
}

extension AnnotationOption {
    var mode: PDFDocument.AnnotationMode {
        switch self {
        case .embed: .embed
        case .flatten: .flatten
        case .flattenForPrint: .flattenForPrint
        case .remove: .remove
        case .summary: .flatten
        }
    }
}

extension FileNameSanitizer {
    /// A title for metadata: any Unicode, but no control characters.
    static func cleanTitle(_ s: String) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })).trimmingCharacters(in: .whitespaces)
    }
}
