// What other features may use of projects and their memberships.
export { getProject, isMember, type Project, projectsOfUser, removeMember, userProjectIds } from './store.ts';
