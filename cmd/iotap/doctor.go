package main

import "github.com/spf13/cobra"

func newDoctorCmd(e *env) *cobra.Command {
	_ = e
	return &cobra.Command{Use: "doctor", Short: "Say what this machine can trace, and how to get the rest"}
}
