// What other features may use of users: who a person is.
export { createUserUnlessTaken, getUserName, isInstanceAdmin, makeFirstInstanceAdmin, userExists, userForEmail, userIdOfEmail, userNames } from './store.ts';
export { signInHint } from './sign-in-hint.ts';
