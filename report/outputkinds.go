package report

import "fmt"

// OutputKinds returns the kind of each -o file of 'iotap report' (for
// WriteFiles): format (--format: OutputHTML, OutputPerfetto or
// OutputJSON) when given, for a single file only; else the kind its
// extension names (OutputKind). The errors say which -o or --format is
// wrong and how to name it.
func OutputKinds(paths []string, format string) ([]string, error) {
	kinds := make([]string, len(paths))
	for i, path := range paths {
		switch {
		case format != "" && len(paths) > 1:
			return nil, fmt.Errorf("--format applies to a single -o; give each file its extension")
		case format == OutputHTML, format == OutputPerfetto, format == OutputJSON:
			kinds[i] = format
		case format != "":
			return nil, fmt.Errorf("--format %q: want html, perfetto or json", format)
		case OutputKind(path) != "":
			kinds[i] = OutputKind(path)
		default:
			return nil, fmt.Errorf("-o %s: unknown kind of output: name it .html (HTML report), .pftrace or .perfetto-trace (Perfetto trace), .json (NDJSON), or give --format", path)
		}
	}
	return kinds, nil
}
