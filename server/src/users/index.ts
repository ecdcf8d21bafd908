// What other features may use of users: who a person is.
export { getUserName, isInstanceAdmin, makeFirstInstanceAdmin, userExists, userForEmail, userIdOfEmail, userNames } from './store.ts';
