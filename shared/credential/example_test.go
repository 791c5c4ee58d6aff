package credential_test

import (
	"bytes"
	"fmt"

	"chessapi/shared/credential"
)

func Example() {
	random := bytes.NewReader(make([]byte, 64)) // crypto/rand.Reader in production
	token, err := credential.PlayerToken.Mint(random)
	if err != nil {
		panic(err)
	}
	kind, _ := credential.KindOf(token)
	fmt.Println(kind, len(token), credential.Hash(token)[:8])
	fmt.Println(credential.Redact(`{"err":"player ` + token + ` unknown"}`))
	code, ok := credential.LinkCode.Normalize("abcd-2345")
	fmt.Println(code, ok)
	// Output:
	// player token 46 ab782d4c
	// {"err":"player pt_[REDACTED] unknown"}
	// ABCD2345 true
}
