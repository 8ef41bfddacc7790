package order

import "fmt"

// Cents is an amount of money in cents of the shop's currency.
type Cents int64

// String formats c with two decimals: "12.50".
func (c Cents) String() string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}
