// What other features may use of projects and their memberships.
export { getProject, isMember, type Project, removeMember, userProjectIds } from './store.ts';
