// Correspondence games (SPEC §16.3): every move has N days (days:N, N one
// of 1, 2, 3, 5, 7, 14), no disconnect grace, no idle limit; the game waits
// for the phone in the pocket, and the inbox and the device notifications
// say when it is your move and when 12 h and 1 h are left. They are a time
// control like the others for games with a friend and against the AI (not
// in rated rooms).
export const DAYS = ['days:1', 'days:2', 'days:3', 'days:5', 'days:7', 'days:14'];

export const isCorrespondence = (tc) => typeof tc === 'string' && tc.startsWith('days:');
