package tracefs

import (
	"fmt"
	"strings"
)

// validName checks an event system or event name: letters, digits,
// underscores and dots (user_events multi-format names are NAME.ID), not
// starting with a dot, so that a name is always one plain path component.
func validName(s string) error {
	if s == "" || len(s) > 255 || s[0] == '.' {
		return fmt.Errorf("tracefs: %w: bad event name %q", ErrBadPath, s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return fmt.Errorf("tracefs: %w: bad event name %q", ErrBadPath, s)
		}
	}
	return nil
}

// EventFormat returns events/SYSTEM/EVENT/format.
func (f *FS) EventFormat(system, event string) ([]byte, error) {
	if err := validName(system); err != nil {
		return nil, err
	}
	if err := validName(event); err != nil {
		return nil, err
	}
	return f.ReadFile("events", system, event, "format")
}

// EnableEvent enables or disables events/SYSTEM/EVENT.
func (f *FS) EnableEvent(system, event string, on bool) error {
	if err := validName(system); err != nil {
		return err
	}
	if err := validName(event); err != nil {
		return err
	}
	v := "0"
	if on {
		v = "1"
	}
	if err := f.WriteFile([]byte(v), "events", system, event, "enable"); err != nil {
		return fmt.Errorf("tracefs: enable %s/%s: %w", system, event, err)
	}
	return nil
}

// EventEnabled reports whether events/SYSTEM/EVENT/enable is set.
func (f *FS) EventEnabled(system, event string) (bool, error) {
	if err := validName(system); err != nil {
		return false, err
	}
	if err := validName(event); err != nil {
		return false, err
	}
	b, err := f.ReadFile("events", system, event, "enable")
	if err != nil {
		return false, err
	}
	// "1", "0", or "0*"/"1*" when soft-disabled by a trigger.
	switch v := strings.TrimRight(strings.TrimSpace(string(b)), "*"); v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	default:
		return false, fmt.Errorf("tracefs: %s/%s/enable: unexpected %q", system, event, v)
	}
}
