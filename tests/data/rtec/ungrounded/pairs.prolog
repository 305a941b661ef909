initiatedAt(near(A,B)=true, T) :- happensAt(meet(A,B), T).
terminatedAt(near(A,B)=true, T) :- happensAt(part(A,B), T).
% c7: a grounded fluent read for arguments its grounding does not admit
holdsFor(far(A,B)=true, I) :-
    holdsFor(near(B,A)=true, I1),
    complement_all([I1], I).
% c7b: a grounded SDF read the same way
holdsFor(close(A,B)=true, I) :- holdsFor(near(A,B)=true, I).
holdsFor(closer(A,B)=true, I) :- holdsFor(close(B,A)=true, I).
% c12: an input event without grounding
initiatedAt(rung(A)=true, T) :- happensAt(ring(A), T).

dynamicDomain(id(_)).
grounding(meet(A,B)) :- id(A), id(B).
grounding(part(A,B)) :- id(A), id(B).
grounding(near(A,B)=true) :- id(A), id(B), A @< B.
grounding(far(A,B)=true) :- id(A), id(B), A @< B.
grounding(close(A,B)=true) :- id(A), id(B), A @< B.
grounding(closer(A,B)=true) :- id(A), id(B), A @< B.
grounding(rung(A)=true) :- id(A).
