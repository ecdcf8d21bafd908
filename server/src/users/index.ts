// What other features may use of users: who a person is.
export { getUserName, userExists, userForEmail } from './store.ts';
