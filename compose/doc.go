// Package compose builds RFC822 messages with go-message, spools them to
// immutable private files and checks them against each method's size limit;
// it also prepares Mirror timeline item metadata.
package compose
