package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAccountSettings: the settings screen of the reference client
// (SPEC §16.2) as a person uses it: name this device, get a recovery code,
// get the account back on a second browser with it, see both sessions and
// sign the second out from the first, block and unblock a player, and
// delete the account.
func TestBrowserAccountSettings(t *testing.T) {
	requireChromium(t)
	c := startLocal(t)
	b := newBrowser(t, c.base)
	phone := b.newPage("phone", pageOpts{mobile: true})
	laptop := b.newPage("laptop", pageOpts{width: 1280, height: 900})
	otherID, _ := c.registered("Mallory")

	phone.open("/")
	phone.waitFor("the home screen", `document.body.dataset.home === 'ready'`, 10*time.Second)
	phone.do("name", chromedp.SendKeys(chromedp.CSS("#name-input"), "가람"), chromedp.Blur(chromedp.CSS("#name-input")))
	phone.open("/#/settings")
	settingsReady := `document.querySelector('.screen.settings')?.dataset.state === 'ready'`
	phone.waitFor("the settings", settingsReady, 10*time.Second)
	if n := eval[int](phone, `document.querySelectorAll('#session-list .session').length`); n != 1 {
		t.Fatalf("%d sessions listed; want this device's one", n)
	}
	phone.do("label", chromedp.SetValue(chromedp.CSS("#session-label"), "내 폰"))
	phone.tap("#btn-session-label")
	phone.waitFor("the label", `document.querySelector('#session-list .session[data-current=true]')?.innerText.includes('내 폰')`, 5*time.Second)

	phone.tap("#btn-recovery-code")
	phone.waitFor("the recovery code", `/^[2-9A-HJKMNP-Z]{4}(-[2-9A-HJKMNP-Z]{4}){5}$/.test(document.querySelector('#recovery-code')?.value ?? '')`, 5*time.Second)
	code := eval[string](phone, `document.querySelector('#recovery-code').value`)
	playerID := eval[string](phone, `document.querySelector('#my-player-id').innerText`)
	phone.screenshot("settings")

	// The laptop gets the account back with the code (typed in lower case).
	laptop.open("/#/settings")
	laptop.waitFor("the settings", settingsReady, 10*time.Second)
	_ = eval[bool](laptop, `document.querySelector('#recovery-card details').open = true`)
	laptop.do("recover", chromedp.SendKeys(chromedp.CSS("#recover-id"), playerID), chromedp.SendKeys(chromedp.CSS("#recover-code"), strings.ToLower(code)))
	laptop.click("#btn-recover")
	laptop.waitFor("the recovered account", fmt.Sprintf(`%s && document.querySelector('#my-player-id')?.innerText === %q`, settingsReady, playerID), 10*time.Second)
	if me := eval[string](laptop, `document.querySelector('#settings-me').innerText`); !strings.Contains(me, "가람") {
		t.Errorf("the laptop's account %q; want 가람's", me)
	}

	// The phone sees both devices and signs the laptop out.
	phone.open("/#/")
	phone.open("/#/settings")
	phone.waitFor("two sessions", settingsReady+` && document.querySelectorAll('#session-list .session').length === 2`, 10*time.Second)
	phone.tap(`#session-list .session[data-current=false] .btn-revoke`)
	phone.waitFor("one session left", `document.querySelectorAll('#session-list .session').length === 1`, 5*time.Second)
	laptop.open("/#/")
	laptop.open("/#/settings")
	laptop.waitFor("the laptop's new account", fmt.Sprintf(`%s && document.querySelector('#my-player-id')?.innerText !== %q`, settingsReady, playerID), 10*time.Second)

	// Blocks.
	phone.do("block", chromedp.SendKeys(chromedp.CSS("#block-id"), otherID))
	phone.tap("#btn-block")
	phone.waitFor("the blocked player", fmt.Sprintf(`document.querySelector('#block-list .blocked[data-player=%q]')?.innerText.includes('Mallory')`, otherID), 5*time.Second)
	phone.tap(fmt.Sprintf(`#block-list .blocked[data-player=%q] .btn-unblock`, otherID))
	phone.waitFor("no blocks", `document.querySelector('#no-blocks')`, 5*time.Second)

	// The account's deletion: the code and the old id work no more.
	phone.tap("#btn-delete-account")
	phone.tap("#confirm-delete-yes")
	phone.waitFor("the home screen", `location.hash === '#/' && document.body.dataset.home === 'ready'`, 10*time.Second)
	if status, body := c.send("GET", "/v1/players/"+playerID, "", nil); status != 404 {
		t.Errorf("the deleted player's profile: %d %s; want 404", status, body)
	}
	if status, _ := c.send("POST", "/v1/players/recover", "", map[string]any{"playerId": playerID, "recoveryCode": code}); status != 404 {
		t.Errorf("the recovery code after the deletion: %d; want 404", status)
	}
}
