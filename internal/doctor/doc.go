// Package doctor finds out what this machine can trace and says how to get
// the rest. Every probe reads files only (procfs, sysfs, tracefs, debugfs,
// /dev) below a root that tests replace, and a missing piece is reported,
// never an error: a Report always lists every facility.
package doctor
